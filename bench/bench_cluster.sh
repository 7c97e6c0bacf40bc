#!/bin/sh
# shellcheck source-path=SCRIPTDIR
# bench_cluster.sh -- riffle-mpi on a simulated cluster: P "nodes", each a
# network namespace whose one link (a veth pair into a bridge in a namespace
# of its own) is rate-limited with tc, the ranks talking Open MPI's TCP
# transport across those links.  Measures wall time, bytes on the links and
# their utilisation, checks the output against `riffle --seed`, and prints
# the cluster model of docs/BENCHMARKS_MPI.md beside the measurement.
#
# Usage (as root): bench/bench_cluster.sh [BUILD_DIR]    (default: build)
#   SIZE=BYTES    the input file (default 200000000: bench_lib.sh's lines)
#   P=N           nodes = namespaces (default 2)
#   RPN=K         ranks per node (default 1): K > 1 is the launch for a node
#                 of K cores (K ranks of one thread each, talking shared
#                 memory inside the node and TCP between nodes)
#   RATES="..."   link rates, tc syntax (default "200mbit 1gbit"); a run on
#                 unshaped links (the TCP stack's own pace) always comes first
#   REPS=N        runs per rate, the fastest reported (default 1)
#   KEEP=1        keep the generated input in $TMPDIR (default /tmp)
#
# Exit status: 0 when measured, and 0 too when skipped (not root, no `ip`,
# `tc` or Open MPI, or the kernel refuses namespaces, veths or htb: a line
# "bench_cluster: skipped: REASON" on standard error says which); 1 when a
# build is missing or a run fails or differs from riffle's bytes.  Every
# namespace, veth and bridge it made is removed on every exit (the trap).
#
# The simulated cluster: namespaces rfc<PID>n0 .. n<P-1> hold one interface
# eth0 with 198.18.0.<i+1>/24 (RFC 2544's benchmarking range, reachable only
# inside these namespaces); its veth peer p<i> sits in namespace rfc<PID>sw on
# bridge br0, the switch.  Each link is shaped in both directions (htb on
# eth0 for what the node sends, on p<i> for what it receives), so a node
# has a full-duplex port of RATE into a non-blocking switch.  mpirun runs
# inside node 0; it starts the other nodes' daemons (orted) through an agent
# script that runs `ip netns exec NS` for the address it is given, as ssh
# would on a real cluster.  All nodes share this machine's file system and
# its cores, so the input and output are local files: none of the model's
# file-system traffic crosses the links.
set -eu

build=${1:-build}
size=${SIZE:-200000000}
p=${P:-2}
rpn=${RPN:-1}
rates=${RATES:-200mbit 1gbit}
reps=${REPS:-1}
tmp=${TMPDIR:-/tmp}
me=bench_cluster

die() { echo "$me: $*" >&2; exit 1; }
skip() { echo "$me: skipped: $*" >&2; exit 0; }

case $p in '' | *[!0-9]*) die "invalid P '$p'" ;; esac
if [ "$p" -lt 2 ] || [ "$p" -gt 250 ]; then die "P must be 2 to 250, not '$p'"; fi
case $rpn in '' | *[!0-9]* | 0) die "invalid RPN '$rpn'" ;; esac
[ "$rpn" -le 64 ] || die "RPN must be 1 to 64, not '$rpn'"
np=$((p * rpn))
# between nodes TCP; inside a node (RPN > 1) shared memory, as on a real one
btl=tcp,self
[ "$rpn" = 1 ] || btl=tcp,vader,self
case $reps in '' | *[!0-9]* | 0) die "invalid REPS '$reps'" ;; esac
[ -d "$build" ] || die "$build: no such build directory"
build=$(cd "$build" && pwd)
riffle=$build/riffle
rmpi=$build/riffle-mpi
[ -x "$riffle" ] || die "$riffle: not built (run make)"
[ -x "$rmpi" ] || die "$rmpi: not built (make mpi)"
# shellcheck source=bench_lib.sh
. "$(dirname "$0")/bench_lib.sh"
bench_require "$me"

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces and tc)"
for tool in ip tc mpirun.openmpi; do
    command -v "$tool" > /dev/null || skip "$tool not found"
done

# ---------------------------------------------------------------------------
# Clean-up: the namespaces (deleting one deletes its end of each veth and so
# the pair; the switch's deletes the bridge), after ending whatever still runs
# inside them -- processes this script started, found by namespace.
ns_prefix=rfc$$
made=
work=
data=
cleanup() {
    for ns in $made; do
        pids=$(ip netns pids "$ns" 2> /dev/null || true)
        # shellcheck disable=SC2086 # one argument per process id
        [ -z "$pids" ] || kill $pids 2> /dev/null || true
    done
    [ -z "$made" ] || sleep 0.2
    for ns in $made; do
        pids=$(ip netns pids "$ns" 2> /dev/null || true)
        # shellcheck disable=SC2086
        [ -z "$pids" ] || kill -9 $pids 2> /dev/null || true
        ip netns delete "$ns" 2> /dev/null || true
    done
    made=
    [ -z "$work" ] || rm -rf "$work"
    [ "${KEEP:-0}" = 1 ] || [ -z "$data" ] || rm -f "$data" "$data.part"
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

work=$(mktemp -d "$tmp/riffle-bench-cluster.XXXXXX")

node() { echo "${ns_prefix}n$1"; }
addr() { echo "198.18.0.$(($1 + 1))"; }
sw=${ns_prefix}sw

# build_cluster: the switch namespace and its bridge, then each node.  The
# first failure of the kernel (namespaces or veths not allowed here) skips.
build_cluster() {
    ip netns add "$sw" 2> "$work/err" || skip "cannot create a network namespace: $(cat "$work/err")"
    made=$sw
    ip -n "$sw" link add br0 type bridge 2> "$work/err" || skip "cannot create a bridge: $(cat "$work/err")"
    ip -n "$sw" link set br0 up
    i=0
    while [ "$i" -lt "$p" ]; do
        ns=$(node "$i")
        ip netns add "$ns"
        made="$made $ns"
        ip -n "$sw" link add "p$i" type veth peer name eth0 netns "$ns" 2> "$work/err" ||
            skip "cannot create a veth pair: $(cat "$work/err")"
        ip -n "$sw" link set "p$i" master br0 up
        ip -n "$ns" link set lo up
        ip -n "$ns" addr add "$(addr "$i")/24" dev eth0
        ip -n "$ns" link set eth0 up
        i=$((i + 1))
    done
}

# shape_end NS DEV: $rate on one end of a link, as one htb class (htb
# rather than tbf: no burst or latency to size for each rate; the quantum
# set only to keep htb from warning); "none": the veth's own queueless
# default
shape_end() {
    tc -n "$1" qdisc del dev "$2" root 2> /dev/null || true
    [ "$rate" != none ] || return 0
    tc -n "$1" qdisc add dev "$2" root handle 1: htb default 1 2> "$work/err" ||
        skip "tc cannot add an htb qdisc: $(cat "$work/err")"
    tc -n "$1" class add dev "$2" parent 1: classid 1:1 htb rate "$rate" ceil "$rate" quantum 60000
}

# shape: $rate on both ends of every link
shape() {
    i=0
    while [ "$i" -lt "$p" ]; do
        shape_end "$(node "$i")" eth0
        shape_end "$sw" "p$i"
        i=$((i + 1))
    done
}

# rate_bits RATE: tc's rate in bits per second (bit, kbit, mbit, gbit; SI)
rate_bits() {
    awk -v r="$1" 'BEGIN {
        n = r + 0; u = tolower(r); sub(/^[0-9.]+/, "", u)
        m = (u == "kbit") ? 1e3 : (u == "mbit") ? 1e6 : (u == "gbit") ? 1e9 : (u == "bit") ? 1 : 0
        if (n <= 0 || m == 0) exit 1
        printf "%.0f\n", n * m }'
}

# htb_sent NS DEV: the bytes an htb qdisc has charged (0 if none)
htb_sent() {
    tc -n "$1" -s qdisc show dev "$2" | awk '
        /^qdisc htb/ { h = 1 } h && /Sent/ { s = $2; exit } END { print s + 0 }'
}

# link_counts: per node "tx rx up down" bytes, one line each: the veth's
# counters (as `ip -s link` shows them), then what the htb of each end
# charged (the node's sending, then its receiving)
link_counts() {
    i=0
    while [ "$i" -lt "$p" ]; do
        ns=$(node "$i")
        echo "$(ip -n "$ns" -s link show dev eth0 | awk '
            /RX:/ { getline; rx = $1 } /TX:/ { getline; tx = $1 } END { print tx, rx }'
        ) $(htb_sent "$ns" eth0) $(htb_sent "$sw" "p$i")"
        i=$((i + 1))
    done
}

# write_agent: what mpirun runs instead of ssh to start a node's daemon: the
# host it names mapped to that node's namespace, the rest run by a shell
# there.  Each node also gets a UTS namespace named after it (as mpirun's
# does in mpi_run): Open MPI tells machines apart by host name, and ranks of
# two nodes called alike would share one shared-memory segment's name.
write_agent() {
    {
        cat << 'EOF'
#!/bin/sh
# bench_cluster.sh's ssh stand-in: the host's address names its namespace
while [ $# -gt 0 ]; do case $1 in -*) shift ;; *) break ;; esac; done
case $1 in
EOF
        i=0
        while [ "$i" -lt "$p" ]; do
            echo "$(addr "$i")) ns=$(node "$i") ;;"
            i=$((i + 1))
        done
        cat << 'EOF'
*) echo "bench_cluster agent: $1: unknown host" >&2; exit 1 ;;
esac
shift
exec ip netns exec "$ns" unshare --uts /bin/sh -c "hostname $ns && $*"
EOF
    } > "$work/agent"
    chmod +x "$work/agent"
    i=0
    while [ "$i" -lt "$p" ]; do
        echo "$(addr "$i") slots=$rpn"
        i=$((i + 1))
    done > "$work/hosts"
}

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# mpi_run NP BTL OUT: riffle-mpi on $input, NP ranks launched from node 0, spread
# over the nodes (each holds RPN of them), TCP kept on the cluster's
# addresses; sets wall (s) and leaves --stats in $work/stats.
# --exchange=bytes: the "nodes" share this machine's files and kernel,
# which separate machines would not, so the records' bytes travel as they
# would between machines.  OUT is removed first: replacing a file frees its
# pages, system time that a rank would otherwise be charged for the last
# run's output.
mpi_run() {
    rm -f "$3"
    ip netns exec "$(node 0)" unshare --uts /bin/sh -c 'hostname "$0" && exec "$@"' "$(node 0)" \
        /usr/bin/time -f '%e' -o "$work/time" \
        mpirun.openmpi -np "$1" --hostfile "$work/hosts" --map-by node \
        --mca plm_rsh_agent "$work/agent" --mca btl "$2" --mca pml ob1 \
        --mca btl_tcp_if_include 198.18.0.0/24 --mca oob_tcp_if_include 198.18.0.0/24 \
        --mca mpi_yield_when_idle 1 --mca hwloc_base_binding_policy none \
        "$rmpi" --seed=1 --threads="$threads" --stats --exchange=bytes "$input" -o "$3" \
        > /dev/null 2> "$work/stats" || { cat "$work/stats" >&2; die "riffle-mpi failed on $1 ranks"; }
    wall=$(tail -n 1 "$work/time")
}

# stat_max COLUMN: the largest value of a --stats column over the ranks,
# found by the column's name in the header line (so added columns do not
# shift it); "-" when the binary has no such column
stat_max() {
    awk -v c="$1" '
        /^riffle-mpi: stats: rank / { for (i = 3; i <= NF; i++) if ($i == c) k = i; next }
        /^riffle-mpi: stats: [0-9]/ && k { if (!n++ || $k + 0 > m) m = $k + 0 }
        END { if (n) print m; else print "-" }' "$work/stats"
}

# stat_sum COLUMN: the sum of a --stats column over the ranks
stat_sum() {
    awk -v c="$1" '
        /^riffle-mpi: stats: rank / { for (i = 3; i <= NF; i++) if ($i == c) k = i; next }
        /^riffle-mpi: stats: [0-9]/ && k { s += $k }
        END { print s + 0 }' "$work/stats"
}

# stat_cpu: the largest user + system seconds of any rank
stat_cpu() {
    awk '
        /^riffle-mpi: stats: rank / { for (i = 3; i <= NF; i++) { if ($i == "user_s") u = i; if ($i == "sys_s") s = i }; next }
        /^riffle-mpi: stats: [0-9]/ && u && s { v = $u + $s; if (v > m) m = v }
        END { print m + 0 }' "$work/stats"
}

# ---------------------------------------------------------------------------
for rate in $rates; do
    [ "$rate" = none ] || rate_bits "$rate" > /dev/null || die "invalid rate '$rate'"
done
build_cluster
write_agent

echo "## riffle-mpi on a simulated cluster"
echo
bench_machine
echo "tools: $("$rmpi" --version | head -n 1); $(mpirun.openmpi --version 2>&1 | head -n 1)"
echo "command: SIZE=$size P=$p RPN=$rpn RATES=\"$rates\" REPS=$reps bench/bench_cluster.sh $build"
cores=$(nproc)
threads=$((cores / np))
[ "$threads" -ge 1 ] || threads=1

data=$tmp/riffle-bench-cluster-$size.txt
bench_gen "$size" "$data"
bytes=$(wc -c < "$data")
want=$work/want
"$riffle" --seed=1 "$data" -o "$want"

# below A B: whether A is empty or B is a smaller number (keep B as the least)
below() {
    [ -z "$1" ] || awk -v a="$2" -v b="$1" 'BEGIN { exit !(a < b) }'
}

# start_cpu NP BTL: sets $start, a rank's CPU seconds that do not grow with
# the input (MPI's start and end, the job's set-up): the busiest rank's
# user + system on a one-record input, the least of two runs.  The model
# counts them once per run, not per GB.
start_cpu() {
    input=$work/one
    printf 'one\n' > "$input"
    start=
    for r in 1 2; do
        mpi_run "$1" "$2" "$work/out"
        cmp -s "$input" "$work/out" || die "$1 ranks on one record: not its bytes"
        t=$(stat_cpu)
        if below "$start" "$t"; then start=$t; fi
    done
    input=$data
}

# The model's compute constant: riffle-mpi on one rank with one thread (as
# each rank has here), no transport but self, inside node 0 so that nothing
# leaves the namespaces: CPU seconds (user + system of the rank) per input
# byte beyond its start-up's (start_cpu), the least of two runs or REPS.
# One rank is a one-process run (the engine riffle uses: nothing packed,
# sent or parsed), so this c is a lower bound of a rank's work among P;
# the wire bytes per input byte, w, are measured on the P-rank run below
# (every rank sends its own records to itself too).  sync
# first: the input and riffle's output just written would otherwise be
# flushed during it.
sync
rate=none
shape
input=$data
start_cpu 1 self
f1=$start
cpu1=
r=0
while [ "$r" -lt 2 ] || [ "$r" -lt "$reps" ]; do
    mpi_run 1 self "$work/out"
    cmp -s "$want" "$work/out" || die "P=1: not riffle's bytes"
    t=$(stat_cpu)
    if below "$cpu1" "$t"; then
        cpu1=$t
        wall1=$wall
    fi
    r=$((r + 1))
done
for col in sent_MB exchange_s user_s sys_s; do
    [ "$(stat_max "$col")" != - ] || die "riffle-mpi --stats printed no $col column"
done
c=$(awk -v t="$cpu1" -v f="$f1" -v b="$bytes" 'BEGIN { printf "%.2f", (t - f) / b * 1e9 }')
echo
echo "input: $(awk -v b="$bytes" 'BEGIN { printf "%.0f MB", b / 1e6 }') (bench_lib.sh's ~50-byte lines); $p nodes, $rpn rank(s) per node, $threads thread(s) per rank"
echo "calibration, P = 1, one thread, no network: wall $wall1 s, CPU $cpu1 s, of which start-up $f1 s:" \
    "c = $c CPU s per GB of a rank's share"
echo "(docs/BENCHMARKS_MPI.md's constants: c = 4.5, w = 1.47)"

# measure: REPS runs at $rate, the fastest kept: $wall, $work/stats, and
# $work/links (per node the counters before, then after); $least, the
# least busiest-rank CPU seconds of the runs (for c, as P = 1's)
measure() {
    best=
    least=
    r=0
    while [ "$r" -lt "$reps" ]; do
        load=$(cut -d' ' -f1 /proc/loadavg)
        link_counts > "$work/before"
        mpi_run "$np" "$btl" "$work/out"
        link_counts > "$work/after"
        cmp -s "$want" "$work/out" || die "$np ranks at $rate: not riffle's bytes"
        t=$(stat_cpu)
        if below "$least" "$t"; then least=$t; fi
        if below "$best" "$wall"; then
            best=$wall
            bestload=$load
            cp "$work/stats" "$work/best"
            paste -d' ' "$work/before" "$work/after" > "$work/links"
        fi
        r=$((r + 1))
    done
    cp "$work/best" "$work/stats"
    wall=$best
    load=$bestload
    { echo "$rate:"; grep '^riffle-mpi: stats:' "$work/stats"; } >> "$work/allstats"
}

# in_job: the longest sum of a rank's phases (the --stats columns named *_s
# other than user_s and sys_s), the time the model describes: no launch
in_job() {
    awk '
        /^riffle-mpi: stats: rank / {
            for (i = 3; i <= NF; i++) if ($i ~ /_s$/ && $i != "user_s" && $i != "sys_s") k[i] = 1
            next }
        /^riffle-mpi: stats: [0-9]/ { t = 0; for (i in k) t += $i; if (t > m) m = t }
        END { printf "%.2f\n", m }' "$work/stats"
}

# row: this run's line of each table, kept in $work/measured and
# $work/modelled for printing after the runs.  The links: the busiest
# direction of any node, by the veth's counters and by what its htb charged;
# use = charged bits / (time x rate).  The model, docs/BENCHMARKS_MPI.md's,
# without the file system's two terms (the files are local here), for P
# nodes of RPN ranks: a rank's start-up (start_cpu) + N/(P x RPN) x c of
# compute (x ranks / cores when the ranks outnumber the cores), then N/P x
# w x (P-1)/P bytes over a node's link (the records whose owner is on
# another node) of B = rate / 8 x 1448 / 1514 bytes of TCP payload per
# second (htb charges each 1448-byte segment's 14 + 20 + 32
# bytes of Ethernet, IP and TCP headers at MTU 1500), the two added as the
# synchronous rounds do; "overlapped" is the larger of the two, what a
# pipelined exchange could reach.  The model is given three c: P = 1's (the
# doc's way), the unshaped P-rank run's (TCP's copies and the transport's
# polling included) and the doc's own 4.5 with w = 1.47.
row() {
    bits=0
    [ "$rate" = none ] || bits=$(rate_bits "$rate")
    awk -v rate="$rate" -v bits="$bits" -v p="$p" -v np="$np" -v cores="$cores" -v wall="$wall" \
        -v job="$(in_job)" -v exch="$(stat_max exchange_s)" -v cpu="$(stat_cpu)" \
        -v sent="$(stat_max sent_MB)" -v n="$bytes" -v c="$c" -v cn="${cn:-0}" -v w="$w" -v f1="$f1" -v fn="$fn" \
        -v load="$load" -v meas="$work/measured" -v mod="$work/modelled" '
        { for (j = 1; j <= 4; j++) d[j] = $(j + 4) - $j
          if (d[1] > link) link = d[1]; if (d[2] > link) link = d[2]
          if (d[3] > tcb) tcb = d[3]; if (d[4] > tcb) tcb = d[4] }
        END {
            name = (bits > 0) ? rate : "unshaped"
            urun = (bits > 0) ? sprintf("%.0f%%", tcb * 8 / (wall * bits) * 100) : "-"
            uex = (bits > 0 && exch + 0 > 0) ? sprintf("%.0f%%", tcb * 8 / (exch * bits) * 100) : "-"
            printf "| %s | %d x %d | %.2f | %s | %s | %.2f | %s | %.1f / %.1f | %s | %s | %s |\n",
                name, p, np / p, wall, job, exch, cpu, sent, link / 1e6, tcb / 1e6, urun, uex, load >> meas
            if (bits == 0) exit
            share = n / np
            crowd = (np > cores) ? np / cores : 1
            B = bits / 8 * 1448 / 1514
            net = n / p * w * (p - 1) / p / B
            m1 = (f1 + share * c / 1e9) * crowd + net
            mn = (fn + share * cn / 1e9) * crowd + net
            doc = share * 4.5 / 1e9 * crowd + n / p * 1.47 * (p - 1) / p / B
            comp = (fn + share * cn / 1e9) * crowd
            lap = (comp > net) ? comp : net
            printf "| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
                rate, net, m1, mn, doc, lap, job, wall, job / m1, job / mn, wall / mn >> mod
        }' "$work/links"
}

: > "$work/measured"
: > "$work/modelled"
: > "$work/allstats"
rate=none
shape
start_cpu "$np" "$btl"
fn=$start
measure
cn=$(awk -v t="$least" -v f="$fn" -v b="$bytes" -v np="$np" 'BEGIN { printf "%.2f", (t - f) / (b / np) * 1e9 }')
w=$(awk -v s="$(stat_sum sent_MB)" -v b="$bytes" 'BEGIN { printf "%.3f", s * 1e6 / b }')
row
for rate in $rates; do
    [ "$rate" != none ] || continue
    shape
    measure
    row
done

echo "calibration, the $np ranks on unshaped links: start-up $fn CPU s (its busiest rank, one record), c = $cn CPU s per GB of a rank's share beyond it (its busiest rank, the least of $reps run(s)), w = $w wire bytes per input byte (all ranks' sent over the input)"
echo
echo "### Measured (the fastest of $reps run(s) per rate; every output cmp-equal to riffle's)"
echo
echo "| link rate | nodes x ranks | wall s | in-job s (longest rank) | exchange s (longest rank) | CPU s (busiest rank) | sent per rank MB | busiest link MB: veth counter / htb charged | link use over the run | link use over the exchange | load average before (1 min) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
cat "$work/measured"
echo
echo "### The cluster model beside it (w = $w; c = $c from P = 1, $cn from the unshaped P-rank run; the doc's c = 4.5, w = 1.47)"
echo
echo "| link rate | link s (N/P x w x (P-1)/P / B) | model s, P = 1's c | model s, unshaped c | model s, doc's c and w | overlapped s, unshaped c | in-job s | wall s | in-job / model (P = 1's c) | in-job / model (unshaped c) | wall / model (unshaped c) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
cat "$work/modelled"

# docs/BENCHMARKS_MPI.md's projection recomputed with this run's c and w:
# 1 TB on 64 nodes over 10 GbE (B = 1.16 GB/s of TCP payload each way), a
# node's share 15.6 GB.  The compute is a node's: share x c / K for a node
# of K cores running K ranks of one thread (RPN's launch: a run with
# RPN > 1 above checks that division), K = 1 being the doc's model.  Three
# ways to add it to the traffic:
#   sum     the doc's model: compute, the exchange (share x w x 63/64 / B),
#           then reading the input and writing the output through the same
#           link (2 x share / B), one after the other;
#   under   the compute hidden under that same traffic: max(compute, link).
#           The link's part cannot shrink further: no output record can be
#           written before every input record is read (the first in a key
#           range may be anyone's last), so the input and the records
#           received come in before the output goes out -- share x (1 + w x
#           63/64) / B in, then share / B out, whatever overlaps inside;
#   local   input and output on the nodes' own disks, as sort benchmarks
#           run (GraySort, CloudSort): only the exchange on the link, each
#           direction share x w x 63/64 / B, under the compute.
echo
awk -v c="$c" -v cn="$cn" -v w="$w" '
    function rate(t) { return 1e12 / 64 / t / 1e6 }
    function proj(c, w, name,    B, share, comp, xch, io, k, t, lap, loc) {
        B = 1.16e9; share = 1e12 / 64
        comp = share * c / 1e9; xch = share * w * 63 / 64 / B; io = 2 * share / B
        for (k = 1; k <= 8; k *= 2) {
            t = comp / k + xch + io
            lap = (comp / k > xch + io) ? comp / k : xch + io
            loc = (comp / k > xch) ? comp / k : xch
            printf "| %s (c = %s, w = %s) | %d | %.0f s | %.0f | %.0f | %.0f |\n",
                name, c, w, k, comp / k, rate(t), rate(lap), rate(loc)
        }
    }
    BEGIN {
        print "### 1 TB on 64 nodes over 10 GbE, MB/s per node"
        print ""
        print "| constants | K cores (ranks) per node | compute per node | sum | under | local |"
        print "|---|---|---|---|---|---|"
        proj(c, w, "P = 1'"'"'s c")
        proj(cn, w, "unshaped P-rank c")
        proj(4.5, 1.47, "the doc'"'"'s constants")
        B = 1.16e9
        print ""
        printf "the link limits (c = 0): sum and under %.0f MB/s per node at w = %s (%.0f at w = 1); local %.0f (%.0f at w = 1)\n",
            1e-6 * B / (w * 63 / 64 + 2), w, 1e-6 * B / (63 / 64 + 2),
            1e-6 * B / (w * 63 / 64), 1e-6 * B / (63 / 64) }'
echo
echo "riffle-mpi --stats of the runs above (rank 0 prints every rank's line):"
echo
sed 's/^/    /' "$work/allstats"
echo
echo "load average after: $(bench_load)"
