#!/bin/sh
# Run the whole suite against one or more build directories and print one plain
# summary line "N passed, N failed".  Every check reports TAP ("ok" / "not ok"):
# the cmocka unit tests (CMOCKA_MESSAGE_OUTPUT=TAP), the bats CLI tests, and the
# shell checks in tests/check_*.sh.  Exit status 0 only if nothing failed.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
[ $# -gt 0 ] || set -- build
log=$(mktemp "${TMPDIR:-/tmp}/riffle-tests.XXXXXX")
trap 'rm -f "$log"' EXIT INT TERM

run() { # label command...
    label=$1; shift
    out=$("$@" 2>&1); status=$?
    printf '%s\n' "$out" | sed "s|^|[$label] |"
    printf '%s\n' "$out" | grep -E '^(not )?ok ' >> "$log"
    if [ $status -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^not ok '; then
        # A crash or a runner error with no failing TAP line still counts.
        echo "not ok - $label exited with status $status" >> "$log"
        echo "[$label] not ok - exited with status $status"
    fi
}

for build in "$@"; do
    export BUILD="$top/$build" RIFFLE="$top/$build/riffle"
    for t in "$build"/tests/*/test_*; do
        [ -x "$t" ] || continue
        case $t in *.o|*.d) continue ;; esac
        CMOCKA_MESSAGE_OUTPUT=TAP run "$build:$(basename "$t")" "$t"
    done
    for c in tests/checks/check_*.sh tests/audit/check_*.sh; do
        [ -f "$c" ] || continue
        run "$build:$(basename "$c")" sh "$c" "$BUILD"
    done
    for b in tests/cli/*.bats tests/audit/*.bats; do
        [ -f "$b" ] || continue
        run "$build:$(basename "$b")" bats --tap "$b"
    done
done

passed=$(grep -c '^ok ' "$log")
failed=$(grep -c '^not ok ' "$log")
echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
