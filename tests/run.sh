#!/bin/sh
# Run the whole suite against one or more build directories.  Every check
# reports TAP: the cmocka unit tests (CMOCKA_MESSAGE_OUTPUT=TAP), the bats CLI
# tests, and the shell checks in tests/checks/check_*.sh and
# tests/audit/check_*.sh.  The output ends with the failed and the skipped
# tests by name, then one line "N passed, N failed, N skipped".
#
# A result "ok N ... # skip reason" (bats, the checks) or "not ok N # SKIP"
# (cmocka) counts as skipped, not passed.  Each file counts as one failure
# more when
#   - it printed no TAP plan ("1..N") or no result at all,
#   - it printed fewer or more results than its plans announced (a crash),
#   - every one of its tests was skipped (a setup that skips everything hides
#     a missing feature: see tests/audit/cli_audit.bats),
#   - it exited non-zero with no failing result.
# The one way for a whole file to skip on purpose is the TAP plan
# "1..0 # skip reason" (e.g. checks that run with the plain build only, or
# need a tool that is not installed): it counts as one skipped entry.
#
# Usage: tests/run.sh [BUILD_DIR...]   (default: build; relative to the
# current directory, else to the top of the tree).  Exit status 0 only if
# nothing failed and something passed.
set -u
here=$(pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
[ $# -gt 0 ] || set -- build
log=$(mktemp "${TMPDIR:-/tmp}/riffle-tests.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Tally one file's TAP (stdin) into the log as "pass|fail|skip<TAB>[label] line".
tally() { # label status
    awk -v label="$1" -v status="$2" '
    function out(kind, line) { printf "%s\t[%s] %s\n", kind, label, line }
    function skipped(line) {
        return line ~ /#[ \t]*[Ss][Kk][Ii][Pp]([^A-Za-z]|$)/
    }
    /^1\.\.[0-9]+/ {
        plans++
        n = $0; sub(/^1\.\./, "", n); sub(/[^0-9].*$/, "", n); planned += n
        if (n + 0 == 0 && skipped($0)) fileskip = $0
        next
    }
    /^(not )?ok([ \t]|$)/ {
        results++
        if (skipped($0)) { skips++; out("skip", $0) }
        else if ($0 ~ /^not /) { fails++; out("fail", $0) }
        else out("pass", $0)
    }
    END {
        if (fileskip != "" && results == 0) {
            out("skip", fileskip)
        } else if (plans == 0 || results == 0) {
            out("fail", "not ok - printed no TAP " \
                (plans == 0 && results == 0 ? "at all" : plans == 0 ? "plan" : "results"))
            fails++
        } else {
            if (results != planned) {
                out("fail", "not ok - planned " planned " tests, ran " results)
                fails++
            }
            if (skips == results) {
                out("fail", "not ok - every test skipped: the file tested nothing")
                fails++
            }
        }
        if (status != 0 && fails == 0)
            out("fail", "not ok - exited with status " status)
    }'
}

run() { # label command...
    label=$1; shift
    out=$("$@" 2>&1); status=$?
    printf '%s\n' "$out" | sed "s|^|[$label] |"
    printf '%s\n' "$out" | tally "$label" "$status" >> "$log"
}

for build in "$@"; do
    case $build in
    /*) dir=$build ;;
    *) if [ -d "$here/$build" ]; then dir=$here/$build; else dir=$top/$build; fi ;;
    esac
    if [ ! -x "$dir/riffle" ]; then
        printf 'fail\t[%s] not ok - no riffle program in %s (not built?)\n' "$build" "$dir" >> "$log"
        echo "[$build] not ok - no riffle program in $dir (not built?)"
        continue
    fi
    export BUILD="$dir" RIFFLE="$dir/riffle"
    units=0
    for t in "$dir"/tests/*/test_*; do
        [ -f "$t" ] && [ -x "$t" ] || continue
        case $t in *.o|*.d) continue ;; esac
        units=$((units + 1))
        CMOCKA_MESSAGE_OUTPUT=TAP run "$build:$(basename "$t")" "$t"
    done
    if [ "$units" -eq 0 ]; then
        printf 'fail\t[%s] not ok - no unit test programs in %s/tests (make tests)\n' "$build" "$dir" >> "$log"
        echo "[$build] not ok - no unit test programs in $dir/tests (make tests)"
    fi
    for c in tests/checks/check_*.sh tests/audit/check_*.sh; do
        [ -f "$c" ] || continue
        run "$build:$(basename "$c")" sh "$c" "$BUILD"
    done
    for b in tests/cli/*.bats tests/audit/*.bats tests/engine/*.bats tests/mpi/*.bats; do
        [ -f "$b" ] || continue
        case $b in
        tests/mpi/*) if [ ! -x "$dir/riffle-mpi" ]; then
                # riffle-mpi is built with the plain build only (Makefile)
                run "$build:$(basename "$b")" echo "1..0 # skip no riffle-mpi in $build"
                continue
            fi ;;
        esac
        run "$build:$(basename "$b")" bats --tap "$b"
    done
done

tab=$(printf '\t')
passed=$(grep -c "^pass$tab" "$log")
failed=$(grep -c "^fail$tab" "$log")
skipped=$(grep -c "^skip$tab" "$log")
echo
if [ "$failed" -gt 0 ]; then
    echo "Failed:"
    sed -n "s/^fail$tab/  /p" "$log"
fi
if [ "$skipped" -gt 0 ]; then
    echo "Skipped:"
    sed -n "s/^skip$tab/  /p" "$log"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
