#!/bin/sh
# The command-line fuzzer (fuzz/cli_argv.c) against the sanitizer build of
# riffle: the kept corpus fuzz/corpus/cli_argv/ once, then random argument
# vectors built from the program's own option tables for CLI_FUZZ_SECONDS
# (25), from a fixed seed (CLI_FUZZ_SEED, 1), so that a run can be repeated.
# A crash, a sanitizer report, an exit status riffle never uses or a silent
# failure is a failure; the vector is shown and kept in fuzz/crashes/.  Runs
# on the sanitizer build only (the plain build has no sanitizer to report).
# Usage: check_cli_fuzz.sh BUILD_DIR   (prints TAP)
build=${1:?build dir}
case $build in
*asan*) ;;
*) echo "1..0 # skip: the command-line fuzzer runs on the sanitizer build"; exit 0 ;;
esac
# Absolute: each run's child changes into its own directory before exec.
build=$(cd "$build" 2>/dev/null && pwd) || build=${1}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
driver=$build/cli_argv
if [ ! -x "$driver" ] || [ ! -x "$build/riffle" ]; then
    echo "1..1"
    echo "not ok 1 - command-line fuzzer: $driver or $build/riffle missing (make tests)"
    exit 0
fi
seconds=${CLI_FUZZ_SECONDS:-25}
seed=${CLI_FUZZ_SEED:-1}
log=$(mktemp "${TMPDIR:-/tmp}/riffle-cli-fuzz.XXXXXX")
trap 'rm -f "$log"' EXIT INT TERM
echo "1..1"
if "$driver" "$build/riffle" "$seconds" "$seed" fuzz/corpus/cli_argv fuzz/crashes > "$log" 2>&1; then
    echo "ok 1 - command-line fuzzer, seed $seed, ${seconds} s: $(tail -n 1 "$log")"
else
    echo "not ok 1 - command-line fuzzer, seed $seed, ${seconds} s"
    sed 's/^/# /' "$log"
fi
