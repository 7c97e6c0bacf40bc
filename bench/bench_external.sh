#!/bin/sh
# bench_external.sh -- the external-memory benchmark, in one run: riffle
# with a --memory limit below the file size against terashuf at the same limit,
# against riffle's own in-memory run, GNU shuf and sort -R.
#
# Usage: bench/bench_external.sh [BUILD_DIR]        (default: build)
#   TERASHUF=PATH   a locally built terashuf (github.com/alexandres/terashuf):
#                   adds its rows, with MEMORY (GiB) set to riffle's limit
#   BENCH_DIR=DIR   inputs (kept and reused), outputs, temporary directories
#                   (default /tmp/riffle-bench; needs about 3x the big file free)
#   SIZE_MB=N       the "1 GB" file in MB (default 1000); smaller to try the
#                   script out: every other size and limit scales with it
#   BIG_MB=N        the big file (default 4.3 x SIZE_MB: 4300 MB > 4 GiB)
#   MEM_SMALL_K=K   riffle --memory on the small file, KiB (default 256 MiB at
#                   SIZE_MB=1000: about a quarter of the file)
#   MEM_BIG_K=K     riffle --memory on the big file, KiB (default 512 MiB)
#   BIG=0           skip the big file;  SORT_R=0  skip sort -R (slow)
#   SEED=S          riffle --seed and terashuf SEED (default 1)
#   RIFFLE_OPTS=..  more riffle options for every riffle row (e.g. --threads=1)
#   REPS=N          runs per row (default 1): the median wall time (with the
#                   min-max range) and the largest peak RSS and temporary disk
#                   use of the N runs are reported; every run is checked
#   CLEAN=1         remove the generated inputs at the end
#
# Rows, each run REPS times back to back (these runs take seconds to minutes):
#   small file: shuf, sort -R, riffle in memory, terashuf, riffle --memory;
#   big file:   riffle in memory, riffle --memory, terashuf.
# Every tool writes to a file in BENCH_DIR (the same cost for all), with
# TMPDIR (and riffle's --temporary-directory) a fresh empty directory.  Per row:
# wall time and peak RSS (/usr/bin/time), throughput (input MB / s), peak
# temporary disk use (the directory polled every 0.1 s, counting files already
# unlinked but still open through /proc/*/fd), temporary files left behind, and
# whether the output is a permutation of the input: same line count, bytes and
# order-independent sum of 64-bit line hashes (a small C helper, ~1 s per GB;
# sorting 4 GB to compare would take minutes).  A row that fails (e.g. a
# terashuf build that cannot allocate its buffer) is reported with its message
# and the run goes on.  Then the ratios the targets are about ("a small
# constant" above the memory limit is taken as 64 MiB: the program, its
# libraries and I/O buffers).  A benchmark, not a test: a missed target never
# fails the script.
set -eu
build=${1:-build}
riffle=$(cd "$(dirname "$build/riffle")" && pwd)/riffle
[ -x "$riffle" ] || { echo "bench_external: $build/riffle: not built (run make)" >&2; exit 1; }
. "$(dirname "$0")/bench_lib.sh"
bench_require bench_external
dir=${BENCH_DIR:-/tmp/riffle-bench}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
size_mb=${SIZE_MB:-1000}
big_mb=${BIG_MB:-$(awk -v s="$size_mb" 'BEGIN { printf "%d", s * 4.3 }')}
mem_small=${MEM_SMALL_K:-$(awk -v s="$size_mb" 'BEGIN { printf "%d", 262144 * s / 1000 }')}
mem_big=${MEM_BIG_K:-$(awk -v s="$size_mb" 'BEGIN { printf "%d", 524288 * s / 1000 }')}
seed=${SEED:-1}
reps=${REPS:-1}
ropts="--seed=$seed${RIFFLE_OPTS:+ $RIFFLE_OPTS}"
terashuf=${TERASHUF:-}
if [ -n "$terashuf" ] && [ ! -x "$terashuf" ]; then
    echo "bench_external: TERASHUF=$terashuf: not an executable" >&2
    exit 1
fi

# linesig < FILE: "lines bytes multiset-hash order-hash".  The multiset hash
# sums two 64-bit hashes of every line (the terminator excluded, so that an
# unterminated last line matches its terminated copy), which no reordering
# changes; the order hash folds the line hashes in sequence.
sigc=$dir/linesig.c
cat > "$sigc" <<'C'
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t fmix(uint64_t h) /* MurmurHash3's 64-bit finaliser */
{
    h ^= h >> 33; h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33; h *= 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 33);
}

static uint64_t line_hash(const unsigned char *p, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ n, w;
    for (; n >= 8; p += 8, n -= 8) {
        memcpy(&w, p, 8);
        h = (h ^ w) * 0x9fb21c651e98df25ULL;
        h ^= h >> 29;
    }
    w = 0;
    memcpy(&w, p, n);
    return fmix(h ^ w);
}

int main(void)
{
    size_t cap = (size_t)1 << 24, len = 0;
    unsigned char *buf = malloc(cap);
    uint64_t lines = 0, bytes = 0, s1 = 0, s2 = 0, ord = 0;
    for (;;) {
        if (!buf) { perror("linesig"); return 1; }
        ssize_t r = read(0, buf + len, cap - len);
        if (r < 0) { perror("linesig: read"); return 1; }
        if (r == 0) break;
        len += (size_t)r;
        unsigned char *p = buf, *end = buf + len, *nl;
        while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
            uint64_t h = line_hash(p, (size_t)(nl - p));
            lines++; bytes += (uint64_t)(nl - p) + 1;
            s1 += h; s2 += fmix(h + 0x632be59bd9b4e019ULL);
            ord = ord * 0x100000001b3ULL + h;
            p = nl + 1;
        }
        len = (size_t)(end - p);
        memmove(buf, p, len);
        if (len == cap) buf = realloc(buf, cap *= 2);
    }
    if (len) {
        uint64_t h = line_hash(buf, len);
        lines++; bytes += len + 1;
        s1 += h; s2 += fmix(h + 0x632be59bd9b4e019ULL);
        ord = ord * 0x100000001b3ULL + h;
    }
    printf("%llu %llu %016llx%016llx %016llx\n", (unsigned long long)lines,
           (unsigned long long)bytes, (unsigned long long)s1,
           (unsigned long long)s2, (unsigned long long)ord);
    return 0;
}
C
linesig=$dir/linesig
${CC:-cc} -O2 -o "$linesig" "$sigc"

# poll_disk DIR STOPFILE OUTFILE: the peak bytes allocated under DIR, polled
# every 0.1 s until STOPFILE appears (then once more), written to OUTFILE.
# Files still open but already unlinked are found through /proc/*/fd; each
# inode counts once.
poll_disk() {
    perl -e '
        use File::Find;
        my ($dir, $stop, $outf) = @ARGV;
        my $max = 0;
        while (1) {
            my $last = -e $stop;
            my (%seen, $sum);
            $sum = 0;
            my $add = sub {
                my @st = @_;
                return if !@st || $seen{"$st[0]:$st[1]"}++;
                $sum += $st[12] * 512;
            };
            find({ no_chdir => 1, wanted => sub { $add->(lstat $_) if -f $_ } }, $dir);
            for my $fd (glob "/proc/[0-9]*/fd/*") {
                my $t = readlink $fd;
                $add->(stat $fd) if defined $t && index($t, "$dir/") == 0;
            }
            $max = $sum if $sum > $max;
            last if $last;
            select(undef, undef, undef, 0.1);
        }
        open(my $f, ">", $outf) or die "$outf: $!";
        print $f "$max\n";' "$1" "$2" "$3"
}

mib() { awk -v b="$1" 'BEGIN { printf "%.0f", b / 1048576 }'; }
memarg() { # KiB -> riffle's SIZE syntax
    if [ $(($1 % 1024)) -eq 0 ]; then echo "$(($1 / 1024))M"; else echo "${1}K"; fi
}
gib() { awk -v k="$1" 'BEGIN { printf "%.6g", k / 1048576 }'; }

# row KEY TOOL LIMIT_K COMMAND: runs COMMAND REPS times with sh, output to a
# file, in the environment IN (the input), T (its fresh temporary directory,
# also TMPDIR), RIFFLE, TERASHUF; prints one table row and sets wall_KEY (the
# median), rss_KEY (the largest), ord_KEY (empty when a run failed).
row() {
    key=$1 tool=$2 limit=$3 cmd=$4
    T=$dir/tmp-$key
    out=$dir/out-$key
    echo "$key: $cmd" >> "$dir/commands"
    IN=$in RIFFLE=$riffle TERASHUF=$terashuf
    export T IN RIFFLE TERASHUF
    : > "$dir/times"
    st=0 diskmax=0 leftmax=0 check=ok r=0 ord=
    while [ $r -lt "$reps" ]; do
        r=$((r + 1))
        rm -rf "$T" "$dir/stop"
        mkdir "$T"
        poll_disk "$T" "$dir/stop" "$dir/disk" &
        poller=$!
        if TMPDIR=$T /usr/bin/time -f '%e %M' -o "$dir/time" sh -c "$cmd" > "$out" 2> "$dir/err"; then
            st=0
        else
            st=$?
        fi
        : > "$dir/stop"
        wait "$poller" || true
        left=$(find "$T" -mindepth 1 | wc -l)
        [ "$left" -le "$leftmax" ] || leftmax=$left
        d=$(cat "$dir/disk" 2>/dev/null || echo 0)
        [ "$d" -le "$diskmax" ] || diskmax=$d
        [ "$st" -eq 0 ] || break
        tail -n 1 "$dir/time" >> "$dir/times"
        # shellcheck disable=SC2046 # the four fields
        set -- $("$linesig" < "$out")
        [ "$1 $2 $3" = "$insig" ] || check="NOT A PERMUTATION (run $r: $1 lines)"
        # shellcheck disable=SC2034 # read through eval below
        ord=$4
        rm -rf "$T" "$out"
    done
    disk=$(mib "$diskmax")
    lim=-
    [ "$limit" = - ] || lim=$(memarg "$limit")
    eval "wall_$key= rss_$key= ord_$key="
    if [ "$st" -ne 0 ]; then
        msg=$(grep -v '^ *$' "$dir/err" | head -n 1 | cut -c1-100)
        printf '| %s | %s | %s | - | - | - | - | %s | FAILED (exit %s, run %s): %s |\n' \
            "$name" "$tool" "$lim" "$disk" "$st" "$r" "$msg"
    else
        wall=$(sort -n "$dir/times" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
        range=$(sort -n "$dir/times" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR > 1) printf " (%s-%s)", lo, hi }')
        rss=$(sort -n -k2 "$dir/times" | tail -n 1 | cut -d' ' -f2)
        [ "$leftmax" -eq 0 ] || check="$check; $leftmax temporary file(s) left"
        eval "wall_$key=\$wall rss_$key=\$rss ord_$key=\$ord"
        mbs=$(awk -v b="$bytes" -v t="$wall" 'BEGIN { printf "%.0f", (t > 0) ? b / 1e6 / t : 0 }')
        over=-
        [ "$limit" = - ] || over=$(awk -v r="$rss" -v l="$limit" 'BEGIN { printf "%+.0f", (r - l) / 1024 }')
        printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$tool" "$lim" \
            "$wall$range" "$mbs" "$(mib $((rss * 1024)))" "$over" "$disk" "$check"
    fi
    rm -rf "$T" "$out"
}

start_file() { # FILE NAME
    in=$1 name=$2
    bytes=$(wc -c < "$in")
    cat "$in" > /dev/null # warm the page cache for every tool alike
    insig=$("$linesig" < "$in" | cut -d' ' -f1-3)
    echo "$name: $in, $bytes bytes, $(echo "$insig" | cut -d' ' -f1) lines" >> "$dir/files"
}

# ratio A B: A / B to 2 places, or n/a when either row failed.
ratio() {
    if [ -z "$1" ] || [ -z "$2" ]; then echo n/a; return; fi
    awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }'
}
target() { # VALUE OP BOUND
    [ "$1" = n/a ] && { echo "n/a"; return; }
    if awk -v v="$1" -v b="$3" "BEGIN { exit !(v $2 b) }"; then echo met; else echo missed; fi
}
get() { eval "echo \${$1_$2:-}"; }

small=$dir/riffle-bench-${size_mb}M.txt
large=$dir/riffle-bench-${big_mb}M.txt
bench_gen $((size_mb * 1000000)) "$small"
if [ "${BIG:-1}" = 1 ]; then
    need=$((big_mb * 3 * 1000))
    avail=$(df -Pk "$dir" | awk 'NR == 2 { print $4 }')
    [ "$avail" -ge "$need" ] || echo "bench_external: warning: $dir has $((avail / 1024)) MiB free, about $((need / 1024)) needed" >&2
    bench_gen $((big_mb * 1000000)) "$large"
fi
: > "$dir/commands"
: > "$dir/files"

echo "## riffle external-memory benchmark"
echo
bench_machine
echo "tools: $("$riffle" --version | head -n 1); $(shuf --version | head -n 1);" \
     "$(sort --version | head -n 1)${terashuf:+; terashuf $terashuf}"
echo "command: SIZE_MB=$size_mb BIG_MB=$big_mb BIG=${BIG:-1} MEM_SMALL_K=$mem_small" \
     "MEM_BIG_K=$mem_big SEED=$seed REPS=$reps RIFFLE_OPTS='${RIFFLE_OPTS:-}'" \
     "${terashuf:+TERASHUF=$terashuf }bench/bench_external.sh $build"
echo
echo "| file | tool | memory limit | wall s (median of $reps) | MB/s | peak RSS MiB (max) | RSS - limit MiB | peak temp disk MiB | output |"
echo "|---|---|---|---|---|---|---|---|---|"

start_file "$small" small
row shuf1 "GNU shuf" - 'shuf "$IN"'
[ "${SORT_R:-1}" = 1 ] && row sort1 "sort -R" - 'sort -R "$IN"'
row mem1 "riffle" - "\"\$RIFFLE\" $ropts \"\$IN\""
[ -n "$terashuf" ] && row tera1 "terashuf" "$mem_small" "MEMORY=$(gib "$mem_small") SEED=$seed \"\$TERASHUF\" < \"\$IN\""
row ext1 "riffle --memory" "$mem_small" \
    "\"\$RIFFLE\" $ropts --memory=$(memarg "$mem_small") --temporary-directory=\"\$T\" \"\$IN\""
if [ "${BIG:-1}" = 1 ]; then
    start_file "$large" big
    row mem4 "riffle" - "\"\$RIFFLE\" $ropts \"\$IN\""
    row ext4 "riffle --memory" "$mem_big" \
        "\"\$RIFFLE\" $ropts --memory=$(memarg "$mem_big") --temporary-directory=\"\$T\" \"\$IN\""
    [ -n "$terashuf" ] && row tera4 "terashuf" "$mem_big" "MEMORY=$(gib "$mem_big") SEED=$seed \"\$TERASHUF\" < \"\$IN\""
fi

echo
echo "Files:"
sed 's/^/    /' "$dir/files"
echo "Commands (sh; IN = the file, T = a fresh empty directory, also TMPDIR; output to a file):"
sed 's/^/    /' "$dir/commands"
echo
echo "Ratios against the targets (n/a: a row failed or was not run):"
for f in 1 4; do
    [ $f = 4 ] && [ "${BIG:-1}" != 1 ] && continue
    [ $f = 1 ] && label="small file" || label="big file"
    t=$(ratio "$(get wall tera$f)" "$(get wall ext$f)")
    echo "- $label: riffle --memory throughput / terashuf's at the same limit: $t (target >= 3: $(target "$t" '>=' 3))"
    t=$(ratio "$(get wall ext$f)" "$(get wall mem$f)")
    echo "- $label: riffle --memory time / riffle in-memory time: $t (target <= 2: $(target "$t" '<=' 2))"
    [ $f = 1 ] && lim=$mem_small || lim=$mem_big
    r=$(get rss ext$f)
    if [ -n "$r" ]; then
        echo "- $label: riffle --memory peak RSS $(mib $((r * 1024))) MiB for a $(mib $((lim * 1024))) MiB limit:" \
             "$(ratio "$r" "$lim")x the limit, RSS - limit = $(awk -v r="$r" -v l="$lim" 'BEGIN { printf "%+.0f", (r - l) / 1024 }') MiB (target: <= a small constant: $(target "$(awk -v r="$r" -v l="$lim" 'BEGIN { print (r - l) / 1024 }')" '<=' 64))"
    else
        echo "- $label: riffle --memory peak RSS vs limit: n/a"
    fi
    a=$(get ord ext$f) b=$(get ord mem$f)
    if [ -n "$a" ] && [ -n "$b" ]; then
        [ "$a" = "$b" ] && same=yes || same=NO
        echo "- $label: riffle --memory output identical to the in-memory output (--seed=$seed): $same (order hash)"
    fi
done
t=$(ratio "$(get wall shuf1)" "$(get wall mem1)")
echo "- small file: GNU shuf time / riffle in-memory time: $t (target >= 5 with output to /dev/null: bench_cli.sh)"
echo
echo "load average after: $(bench_load)"
rm -f "$dir/commands" "$dir/files" "$dir/stop" "$dir/disk" "$dir/time" "$dir/times" "$dir/err" "$sigc" "$linesig"
[ "${CLEAN:-0}" = 1 ] && rm -f "$small" "$large"
exit 0
