# audit_setup.bash -- what every `riffle audit` test file's setup starts with.
# Load with `load ../lib/audit_setup` and call audit_setup first in setup():
# it sets RIFFLE (from BUILD when not given), the C locale and T (the test's
# own directory), and skips the test, saying why, when this riffle has no
# audit subcommand wired in.

audit_setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
    if ! "$RIFFLE" audit --list > /dev/null 2>&1; then
        skip "'$RIFFLE audit --list' fails: the audit subcommand is not dispatched"
    fi
}
