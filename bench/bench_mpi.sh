#!/bin/sh
# bench_mpi.sh -- riffle-mpi on P = 1, 2, 4 ranks against single-process
# riffle, in one run, on the data of bench_cli.sh (bench_lib.sh's generator).
#
# Usage: bench/bench_mpi.sh [BUILD_DIR]        (default: build)
#   SIZE=BYTES  the strong-scaling file (default 1000000000, bench_cli.sh's
#               1 GB file; a smaller one for a quick run)
#   WEAK=MIB    the weak-scaling share per rank (default 256): files of
#               P x WEAK MiB on P ranks
#   PS="1 2 4"  the rank counts (P > 1: a row with the default exchange,
#               auto -- on one machine every rank reads the input itself,
#               --exchange=direct --, one with references between the ranks,
#               --exchange=refs, and one with bytes, --exchange=bytes)
#   OLD=DIR     a second build (e.g. one from before a change): its riffle-mpi
#               runs too, in the row after each of this build's
#   KEEP=1      keep the generated files in $TMPDIR (default /tmp)
#   TASKS=N     the file transport's tasks (default 4; 0 for none): riffle
#               scatter --count, riffle scatter and riffle gather -o, tasks
#               0 .. N-1 one after another on the strong file, CPU against
#               riffle's; then the same with scatter --by-reference (the
#               gathers given the file), and with scatter --direct (each
#               gather reading all of the file itself)
#
# Every command writes its output to a file in $TMPDIR (riffle-mpi needs a
# file its ranks can share), and riffle-mpi's output is compared with
# riffle's: the same bytes, or the benchmark stops.  Per case: wall time,
# CPU time (user + system of every process), throughput (input MB / wall),
# and from riffle-mpi's --stats the largest peak RSS and bytes sent of any
# rank and rank 0's time per phase.  Ranks beyond the machine's cores share
# them: say so when reading the figures.  A benchmark, not a test.
set -eu
build=${1:-build}
riffle=$build/riffle
rmpi=$build/riffle-mpi
tmp=${TMPDIR:-/tmp}
size=${SIZE:-1000000000}
weak=${WEAK:-256}
ps=${PS:-1 2 4}
[ -x "$riffle" ] || { echo "bench_mpi: $riffle: not built (run make)" >&2; exit 1; }
[ -x "$rmpi" ] || { echo "bench_mpi: $rmpi: not built (make mpi)" >&2; exit 1; }
. "$(dirname "$0")/bench_lib.sh"
bench_require bench_mpi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# ob1: the layer vader runs under, named so that MPI_Init does not probe
# fabric libraries first (riffle-mpi(1), TUNING)
export OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_hwloc_base_binding_policy=none
cores=$(nproc)
out=$tmp/riffle-bench-mpi.out
want=$tmp/riffle-bench-mpi.want

# timed FILE COMMAND...: sets wall, cpu (user + sys, children included),
# rss (KiB of the largest process /usr/bin/time saw); stderr in $tmp/...err.
# sync first: the gigabyte the run before wrote would otherwise be written
# back during this one, which the kernel's dirty-page throttling charges to
# its write phase (docs/BENCHMARKS_MPI.md)
timed() {
    f=$1
    shift
    sync
    /usr/bin/time -f '%e %U %S %M' -o "$tmp/riffle-bench-mpi.time" "$@" \
        2> "$tmp/riffle-bench-mpi.err"
    read -r wall u s rss < "$tmp/riffle-bench-mpi.time"
    cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.1f", u + s }')
    bytes=$(wc -c < "$f")
    mbs=$(awk -v b="$bytes" -v t="$wall" 'BEGIN { printf "%.0f", (t > 0) ? b / 1e6 / t : 0 }')
}

# the stats of the last riffle-mpi run: the largest peak RSS and the
# largest proportional resident memory at the end of the write (MiB, each
# shared page divided among the processes that map it: "-" for P = 1 and
# for a binary that does not report it) and bytes sent (MB) of any rank,
# rank 0's phases (count exchange sizes write commit), the bytes all ranks
# sent (MB), and the bytes of records that stayed in their rank (MB: the
# local lane; 0 for a binary without one)
stats() {
    awk '/^riffle-mpi: stats: [0-9]/ {
            if ($13 > rss) rss = $13; if ($9 > sent) sent = $9; all += $9; kept += $17
            if (NF >= 21 && $21 > pss) pss = $21
            if ($3 == 0) ph = sprintf("%.2f / %.2f / %.2f / %.2f / %.2f", $4, $5, $6, $7, $8) }
         END { p = "-"; if (pss > 0) p = sprintf("%.0f", pss)
               printf "%.0f / %s|%.0f|%s|%.3f|%.3f\n", rss, p, sent, ph, all, kept }' \
        "$tmp/riffle-bench-mpi.err"
}

header() {
    echo
    echo "| case | P | threads per rank | wall s | CPU s | MB/s | peak RSS / PSS per rank MiB (target) | sent per rank MB | rank 0: count / exchange / sizes / write / commit s | wall vs riffle | CPU vs riffle | wire bytes per byte sent |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
}

# riffle_row CASE FILE: single-process riffle, all cores; its output kept
riffle_row() {
    timed "$2" "$riffle" --seed=1 "$2" -o "$want"
    base=$wall
    base_cpu=$cpu
    printf '| %s | riffle | %s | %s | %s | %s | %.0f / - | - | - | 1.00x | 1.00x | - |\n' "$1" "$cores" "$wall" \
        "$cpu" "$mbs" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')"
}

# mpi_row CASE FILE P [EXCHANGE]: riffle-mpi on P ranks (the cores shared
# among them), with --exchange=EXCHANGE when given (the default, auto: the
# ranks of this machine each read all of the one input file themselves)
mpi_row() {
    p=$3
    th=$((cores / p))
    [ "$th" -ge 1 ] || th=1
    timed "$2" mpirun.openmpi -np "$p" "$rmpi" --seed=1 --threads="$th" --stats \
        ${4:+--exchange="$4"} "$2" -o "$out"
    cmp -s "$want" "$out" || { echo "bench_mpi: P=$p: not riffle's bytes" >&2; exit 1; }
    rm -f "$out"
    st=$(stats)
    target=$(awk -v b="$bytes" -v p="$p" 'BEGIN { printf "%.0f", b / p * 1.5 / 1048576 + 64 }')
    printf '| %s | %s | %s | %s | %s | %s | %s (%s) | %s | %s | %sx | %sx | %s |\n' "$1" "$p" "$th" \
        "$wall" "$cpu" "$mbs" "${st%%|*}" "$target" "$(echo "$st" | cut -d'|' -f2)" \
        "$(echo "$st" | cut -d'|' -f3)" "$(awk -v t="$wall" -v b="$base" 'BEGIN { printf "%.2f", t / b }')" \
        "$(awk -v t="$cpu" -v b="$base_cpu" 'BEGIN { printf "%.2f", (b > 0) ? t / b : 0 }')" \
        "$(awk -v s="$(echo "$st" | cut -d'|' -f4)" -v k="$(echo "$st" | cut -d'|' -f5)" -v b="$bytes" \
            'BEGIN { t = b - k * 1e6; if (s > 0 && t > b / 1000) printf "%.3f", s * 1e6 / t; else printf "-" }')"
}

# tasks_row CASE FILE N BUILD [refs|direct]: the file transport's three steps
# for tasks 0 .. N-1 in sequence with BUILD's riffle (a scheduler's array job
# run one task at a time), with `refs` by reference, with `direct` no records
# scattered (each gather reads the file); CPU summed over the 3 N
# processes, wall from the first to the last, the gathers' outputs
# concatenated and compared with riffle's
tasks_row() {
    case=$1
    n=$3
    file=$2
    bin=$4/riffle
    by=
    [ "${5:-}" != refs ] || by=--by-reference
    [ "${5:-}" != direct ] || by=--direct
    d=$(mktemp -d "$tmp/riffle-bench-tasks.XXXXXX")
    sync
    t0=$(date +%s.%N)
    cpu=0
    for step in count scatter gather; do
        i=0
        while [ "$i" -lt "$n" ]; do
            case $step in
            count) set -- "$bin" scatter --count --task=$i --tasks="$n" --dir="$d" "$file" ;;
            scatter) set -- "$bin" scatter --task=$i --tasks="$n" --dir="$d" --seed=1 "$file" ;;
            gather) set -- "$bin" gather --task=$i --tasks="$n" --dir="$d" --seed=1 -o "$d/out.$i" ;;
            esac
            # by reference or direct: the option to scatter, and the gathers read the file
            if [ -n "$by" ] && [ "$step" = scatter ]; then set -- "$@" "$by"; fi
            if [ -n "$by" ] && [ "$step" = gather ]; then set -- "$@" "$file"; fi
            /usr/bin/time -f '%U %S' -o "$tmp/riffle-bench-mpi.time" "$@" ||
                { echo "bench_mpi: $step task $i failed" >&2; exit 1; }
            cpu=$(awk -v c="$cpu" '{ printf "%.2f", c + $1 + $2 }' "$tmp/riffle-bench-mpi.time")
            i=$((i + 1))
        done
    done
    wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
    i=0
    while [ "$i" -lt "$n" ]; do cat "$d/out.$i"; i=$((i + 1)); done | cmp -s - "$want" ||
        { echo "bench_mpi: $n tasks: not riffle's bytes" >&2; exit 1; }
    rm -rf "$d"
    printf '| %s | %s | %s | %s | %sx |\n' "$case" "$n" "$wall" "$cpu" \
        "$(awk -v t="$cpu" -v b="$base_cpu" 'BEGIN { printf "%.2f", (b > 0) ? t / b : 0 }')"
}

# old_row CASE FILE P: mpi_row with OLD's riffle-mpi, when OLD is set
old_row() {
    [ -n "${OLD:-}" ] || return 0
    new_rmpi=$rmpi
    rmpi=$OLD/riffle-mpi
    mpi_row "$@"
    rmpi=$new_rmpi
}

echo "## riffle-mpi benchmark"
echo
bench_machine
echo "tools: $("$rmpi" --version | head -n 1); $(mpirun.openmpi --version 2>&1 | head -n 1)"
echo "command: SIZE=$size WEAK=$weak PS=\"$ps\" TASKS=${TASKS:-4} bench/bench_mpi.sh $build"

# One generated file, large enough for both: the strong file is its first
# SIZE bytes (bench_gen's output for SIZE), the weak files its first P x WEAK MiB.
maxp=$(for p in $ps; do echo "$p"; done | sort -n | tail -n 1)
gen=$((maxp * weak * 1048576))
[ "$gen" -ge "$size" ] || gen=$size
src=$tmp/riffle-bench-mpi-src-$gen.txt
bench_gen "$gen" "$src"
big=$tmp/riffle-bench-mpi-$size.txt
head -c "$size" "$src" > "$big"
echo
echo "### Strong scaling: one file of $(awk -v b="$(wc -c < "$big")" 'BEGIN { printf "%.0f MB", b / 1e6 }')"
header
riffle_row strong "$big"
for p in $ps; do
    mpi_row strong "$big" "$p"
    old_row "strong (OLD)" "$big" "$p"
    # references between the ranks, and every record's bytes, as between machines
    [ "$p" -eq 1 ] || mpi_row "strong, refs" "$big" "$p" refs
    [ "$p" -eq 1 ] || mpi_row "strong, bytes" "$big" "$p" bytes
    [ "$p" -eq 1 ] || old_row "strong, bytes (OLD)" "$big" "$p" bytes
done

tasks=${TASKS:-4}
if [ "$tasks" -gt 0 ]; then
    echo
    echo "### The file transport: $tasks scatter/gather tasks one after another"
    echo
    echo "| case | tasks | wall s | CPU s | CPU vs riffle |"
    echo "|---|---|---|---|---|"
    timed "$big" "$riffle" --seed=1 "$big" -o "$want"
    base_cpu=$cpu
    printf '| riffle | - | %s | %s | 1.00x |\n' "$wall" "$cpu"
    tasks_row "riffle scatter / gather" "$big" "$tasks" "$build"
    tasks_row "riffle scatter --by-reference / gather FILE" "$big" "$tasks" "$build" refs
    tasks_row "riffle scatter --direct / gather FILE" "$big" "$tasks" "$build" direct
    [ -z "${OLD:-}" ] || tasks_row "riffle scatter / gather (OLD)" "$big" "$tasks" "$OLD"
fi

echo
echo "### Weak scaling: $weak MiB per rank"
header
for p in $ps; do
    f=$tmp/riffle-bench-mpi-weak-$p.txt
    head -c $((p * weak * 1048576)) "$src" > "$f"
    riffle_row "weak $p x $weak MiB" "$f"
    mpi_row "weak $p x $weak MiB" "$f" "$p"
    old_row "weak $p x $weak MiB (OLD)" "$f" "$p"
    [ "${KEEP:-0}" = 1 ] || rm -f "$f"
done
echo
echo "load average after: $(bench_load)"
rm -f "$out" "$want" "$tmp/riffle-bench-mpi.time" "$tmp/riffle-bench-mpi.err"
[ "${KEEP:-0}" = 1 ] || rm -f "$big" "$src"
