#!/usr/bin/env bats
# The engines (cli/engine.h) compute one keyed order: with a seed the output
# is byte-identical in memory, through temporary bucket files (a tiny
# --memory makes small inputs spill), for -n K (streamed head), on one thread
# or several.  External runs lose nothing, leave no temporary files on any
# exit path, and report a full disk.

load ../lib/bg_jobs

teardown() {
    bg_cleanup
}

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
    mkdir -p "$T/tmp"
    # ~400 KB of varied lines, some with tabs and empty ones
    awk 'BEGIN { for (i = 1; i <= 20000; i++) {
        s = ""; for (j = 0; j < i % 37; j++) s = s sprintf("%c", 97 + (i * j) % 26)
        if (i % 101 == 0) s = ""; else if (i % 7 == 0) s = s "\t" i
        print s " " i } }' > "$T/in"
}

# Same output in memory and through buckets of every size, and no leftovers.
same_everywhere() {
    "$RIFFLE" "$@" > "$T/mem"
    for m in 1K 8K 100K; do
        "$RIFFLE" --memory=$m -T "$T/tmp" "$@" > "$T/ext"
        cmp "$T/mem" "$T/ext"
    done
    [ -z "$(ls -A "$T/tmp")" ]
}

@test "external output equals in-memory output for the same seed" {
    same_everywhere --seed=1 "$T/in"
    same_everywhere --seed=hello --rng=xoshiro256++ "$T/in"
    same_everywhere --seed=2 --rng=pcg64 "$T/in"
}

@test "external: stdin, several inputs, -z, --header and -n agree too" {
    "$RIFFLE" --seed=3 "$T/in" > "$T/mem"
    for m in 1K 100K; do
        cmp "$T/mem" <("$RIFFLE" --seed=3 --memory=$m -T "$T/tmp" - < "$T/in")
    done
    printf 'x\ny' > "$T/short"          # no final newline, between inputs
    same_everywhere --seed=3 "$T/short" "$T/in" "$T/short"
    tr '\n' '\0' < "$T/in" > "$T/inz"
    same_everywhere --seed=3 -z "$T/inz"
    same_everywhere --seed=3 --header=2 "$T/in"
    same_everywhere --seed=3 -n 15000 "$T/in"
    same_everywhere --seed=3 -n 7 --header=1 "$T/in"
}

@test "a pipe that outgrows --memory spills and gives the same output" {
    "$RIFFLE" --seed=4 "$T/in" > "$T/mem"
    cat "$T/in" | "$RIFFLE" --seed=4 --memory=2K -T "$T/tmp" > "$T/ext"
    cmp "$T/mem" "$T/ext"
    cat "$T/in" "$T/in" | "$RIFFLE" --seed=4 --memory=64K -T "$T/tmp" | sort > "$T/twice"
    cmp "$T/twice" <(sort "$T/in" "$T/in")
    [ -z "$(ls -A "$T/tmp")" ]
}

@test "-n K is the head of the full output, in memory and externally" {
    "$RIFFLE" --seed=5 "$T/in" > "$T/full"
    for k in 1 10 1000 19999 20000 30000; do
        cmp <("$RIFFLE" --seed=5 -n $k "$T/in") <(head -n $k "$T/full")
        cmp <(cat "$T/in" | "$RIFFLE" --seed=5 -n $k) <(head -n $k "$T/full")
        cmp <("$RIFFLE" --seed=5 --memory=4K -T "$T/tmp" -n $k "$T/in") <(head -n $k "$T/full")
    done
}

@test "the thread count does not change the output" {
    seq 600000 > "$T/big"
    "$RIFFLE" --seed=6 --threads=1 "$T/big" > "$T/one"
    for t in 2 3 0; do
        cmp "$T/one" <("$RIFFLE" --seed=6 --threads=$t "$T/big")
    done
    cmp "$T/one" <("$RIFFLE" --seed=6 --threads=2 --memory=1M -T "$T/tmp" "$T/big")
    cmp "$T/one" <("$RIFFLE" --seed=6 --threads=2 -i 1-600000)
}

@test "external runs keep every byte: binary records, unterminated last line" {
    head -c 300000 /dev/urandom > "$T/bin"
    "$RIFFLE" --memory=1K -T "$T/tmp" "$T/bin" | sort > "$T/got"
    # the last record gets its newline, as in memory
    { cat "$T/bin"; [ "$(tail -c 1 "$T/bin" | od -An -c | tr -d ' ')" = '\n' ] || echo; } | sort > "$T/want"
    cmp "$T/got" "$T/want"
    [ -z "$(ls -A "$T/tmp")" ]
}

@test "external -o replaces the file atomically, even when it is the input" {
    cp "$T/in" "$T/data"
    "$RIFFLE" --seed=8 "$T/in" > "$T/want"
    "$RIFFLE" --seed=8 --memory=2K -T "$T/tmp" -o "$T/data" "$T/data"
    cmp "$T/want" "$T/data"
    [ -z "$(ls -A "$T/tmp")" ]
}

@test "a missing or unusable temporary directory is an error" {
    run "$RIFFLE" --memory=1K -T "$T/none" "$T/in"
    [ "$status" -eq 1 ]
    [[ "$output" == *"$T/none"* ]]
}

@test "a full disk: a clear message, exit 1, no temporary files, -o untouched" {
    export RIFFLE_NAMED_TEMPS=1   # named temporaries: their names are what is checked
    mkdir -p "$T/small"
    mount -t tmpfs -o size=64k tmpfs "$T/small" 2> /dev/null || skip "cannot mount a small tmpfs here"
    echo original > "$T/out"
    run "$RIFFLE" --memory=4K -T "$T/small" -o "$T/out" "$T/in"
    left=$(ls -A "$T/small")
    umount "$T/small"
    [ "$status" -eq 1 ]
    [[ "$output" == "riffle: $T/small/riffle-"*": No space left on device" ]]
    [ -z "$left" ]
    [ "$(cat "$T/out")" = original ]
    [ -z "$(ls -A "$T" | grep '^\.riffle-' || true)" ]
}

@test "a file size limit (EFBIG) is reported the same way" {
    export RIFFLE_NAMED_TEMPS=1   # named temporaries: their names are what is checked
    echo original > "$T/out"
    # 1 KiB files at most: the bucket files (written first) outgrow it
    run bash -c "trap '' XFSZ; ulimit -f 1; exec \"$RIFFLE\" --memory=4K -T \"$T/tmp\" -o \"$T/out\" \"$T/in\""
    [ "$status" -eq 1 ]
    [[ "$output" == "riffle: $T/tmp/riffle-"*": File too large" ]]
    [ -z "$(ls -A "$T/tmp")" ]
    [ "$(cat "$T/out")" = original ]
}

# The signal goes while riffle waits in its scatter phase, and the test then
# waits for it, bounded, in its own shell (bg_jobs.bash, signal_scattering,
# says how and why not `run wait`).
@test "every terminating signal during an external run removes the temporary files" {
    export RIFFLE_NAMED_TEMPS=1   # named temporaries: their names are what is checked
    for sig in INT TERM HUP QUIT USR1 USR2 ALRM; do
        echo original > "$T/out"
        signal_scattering "$sig" "$T/in"
        echo "# $sig: status $BG_STATUS" >&3
        [ "$BG_STATUS" -eq $((128 + $(kill -l "$sig"))) ]   # died of that signal
        [ -z "$(ls -A "$T/tmp")" ]
        [ "$(cat "$T/out")" = original ]
        [ -z "$(ls -A "$T" | grep '^\.riffle-' || true)" ]
    done
}

@test "--progress shows the phases of an external run on stderr" {
    RIFFLE_PROGRESS_DELAY_MS=0 "$RIFFLE" --progress --memory=8K -T "$T/tmp" "$T/in" \
        2> "$T/err" > /dev/null
    grep -q "scatter" "$T/err"
    grep -q "shuffle" "$T/err"
    "$RIFFLE" --memory=8K -T "$T/tmp" "$T/in" 2> "$T/err" > /dev/null
    [ ! -s "$T/err" ]
}
