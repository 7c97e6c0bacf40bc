#!/usr/bin/env bats
# Any --memory works in bounded time: below the size at which splitting a
# bucket again pays (64 KiB), buckets are ordered in memory whatever the
# budget says, so a budget of a byte cannot make the external engine split
# buckets into files without end.  The output is the in-memory output.

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
    mkdir -p "$T/tmp"
    # ~1.4 MB: 40000 lines of varied length
    awk 'BEGIN { for (i = 1; i <= 40000; i++) {
        s = ""; for (j = 0; j < (i * 13) % 61; j++) s = s "y"
        print i " " s } }' > "$T/in"
}

@test "--memory of 1 and 2 bytes and 1K: the in-memory output, in bounded time, nothing left" {
    "$RIFFLE" --seed=9 "$T/in" > "$T/mem"
    for m in 1 2 1K; do
        # 60 s is a bound on a hang, not a speed target (a few seconds here)
        timeout 60 "$RIFFLE" --seed=9 --memory=$m -T "$T/tmp" "$T/in" > "$T/ext"
        cmp "$T/mem" "$T/ext"
    done
    [ -z "$(ls -A "$T/tmp")" ]
}

@test "10^6 empty lines under --memory=1K: every record, in bounded time" {
    head -c 1000000 /dev/zero | tr '\0' '\n' > "$T/empty"
    timeout 60 "$RIFFLE" --seed=1 --memory=1K -T "$T/tmp" "$T/empty" > "$T/out"
    [ "$(wc -l < "$T/out")" -eq 1000000 ]
    [ -z "$(tr -d '\n' < "$T/out")" ]
    [ -z "$(ls -A "$T/tmp")" ]
}
