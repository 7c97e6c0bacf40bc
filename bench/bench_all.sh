#!/bin/sh
# Run riffle's benchmarks built in directory $1 (default build/bench; `make
# bench` builds them and calls this).  bench_core runs first, with any further
# arguments (--reps N, --sizes LIST, --min-elems N, --no-draws, --big); then
# every other bench_* program in the directory, with none.  BIG=1 in the
# environment asks every benchmark for its large sizes (bench_core: n = 10^8,
# about 0.8 GB).  BENCHES="core big ..." runs only those; "cli" (asked for by
# name only: it generates files and takes minutes) adds bench/bench_cli.sh on
# the riffle program of the parent build directory, and "external" (by name
# only too: 1 GB and 4.3 GB files, tens of minutes) bench/bench_external.sh
# on the same program (TERASHUF=path adds terashuf), and "scale" (by name
# only) bench/bench_scale.sh: the audit and rank/unrank at n = 10^6 (OLD=path
# to a previous riffle adds old/new ratios), and "cluster" (by name only: root,
# network namespaces, about a minute) bench/bench_cluster.sh, riffle-mpi over
# rate-limited links, on the riffle-mpi of the parent build directory.  The machine and its
# load are printed before and after: figures from a shared machine mean
# little without them.  A benchmark, not a test: a missed target never fails;
# only a missing program or a broken shuffle (non-zero exit) does.
set -eu
dir=${1:-build/bench}
[ $# -gt 0 ] && shift
if [ ! -x "$dir/bench_core" ]; then
    echo "bench_all.sh: $dir/bench_core: not built (run 'make bench')" >&2
    exit 1
fi
[ "${BIG:-0}" = 1 ] && set -- --big "$@"

load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown; }
selected() { # is bench_$1 wanted?
    [ -z "${BENCHES:-}" ] && return 0
    case " $BENCHES " in *" $1 "*) return 0 ;; esac
    return 1
}

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
echo "machine: $(nproc) CPUs, ${cpu:-unknown CPU}, $(uname -sr)"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); load average before: $(load)"
status=0
if selected core; then
    "$dir/bench_core" "$@" || status=1
fi
for prog in "$dir"/bench_*; do
    name=${prog##*/bench_}
    case $name in core|*.o|*.d) continue ;; esac
    if [ ! -x "$prog" ] || ! selected "$name"; then continue; fi
    echo
    echo "== bench_$name (load average $(load)) =="
    "$prog" || status=1
done
case " ${BENCHES:-} " in
*" cli "*)
    echo
    echo "== bench_cli.sh (load average $(load)) =="
    sh "$(dirname "$0")/bench_cli.sh" "$(dirname "$dir")" || status=1
    ;;
esac
case " ${BENCHES:-} " in
*" scale "*)
    echo
    echo "== bench_scale.sh (load average $(load)) =="
    sh "$(dirname "$0")/bench_scale.sh" "$(dirname "$dir")" || status=1
    ;;
esac
case " ${BENCHES:-} " in
*" cluster "*)
    echo
    echo "== bench_cluster.sh (load average $(load)) =="
    sh "$(dirname "$0")/bench_cluster.sh" "$(dirname "$dir")" || status=1
    ;;
esac
case " ${BENCHES:-} " in
*" external "*)
    echo
    echo "== bench_external.sh (load average $(load)) =="
    sh "$(dirname "$0")/bench_external.sh" "$(dirname "$dir")" || status=1
    ;;
esac
echo "load average after: $(load)"
exit $status
