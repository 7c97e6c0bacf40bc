#!/usr/bin/env bats
# The external engine's threads (src/engine/external.c): pass 1 hands full bucket
# buffers to a writer thread, pass 2 orders the next bucket on a helper thread
# while the current one is written.  Neither may change a byte: with a seed
# the output equals the in-memory output for every --threads and --memory,
# records longer than a buffer keep their place, and a failed write on the
# writer thread is reported like any other (file name, exit 1, no leftovers).

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
    mkdir -p "$T/tmp"
    # ~4 MB of varied lines (80000, ~50 bytes each)
    awk 'BEGIN { for (i = 1; i <= 80000; i++) {
        s = ""; for (j = 0; j < (i * 7) % 83; j++) s = s sprintf("%c", 97 + (i + j) % 26)
        print i " " s } }' > "$T/in"
}

# cmp against the in-memory output for every thread count, no leftovers.
same_for_threads() { # MEMORY ARGS...
    local m=$1
    shift
    "$RIFFLE" "$@" > "$T/mem"
    for t in 1 2 3 8; do
        "$RIFFLE" --threads=$t --memory="$m" -T "$T/tmp" "$@" > "$T/ext"
        cmp "$T/mem" "$T/ext"
    done
    [ -z "$(ls -A "$T/tmp")" ]
}

@test "writer and helper threads: the in-memory output for every --threads" {
    # 1M: 16 buckets of ~330 KB with their offsets, two at a time fit (helper
    # on); 300K: some buckets split again; 64K: 8 KiB buffers, many flushes
    for m in 1M 300K 64K; do
        same_for_threads $m --seed=1 "$T/in"
    done
    same_for_threads 1M --seed=2 --rng=xoshiro256++ "$T/in"
}

@test "short records (two buckets do not fit at once): same output" {
    seq 300000 > "$T/seq"
    same_for_threads 1M --seed=3 "$T/seq"
    same_for_threads 200K --seed=3 "$T/seq"
}

@test "-n K stops in any bucket, helped or not" {
    "$RIFFLE" --seed=4 "$T/in" > "$T/full"
    for k in 1 4000 5001 9999 40000 79999; do
        for t in 1 2; do
            cmp <("$RIFFLE" --seed=4 --threads=$t --memory=1M -T "$T/tmp" -n $k "$T/in") \
                <(head -n $k "$T/full")
        done
    done
    [ -z "$(ls -A "$T/tmp")" ]
}

@test "stdin, --header and -z through the threads" {
    "$RIFFLE" --seed=5 --header=3 "$T/in" > "$T/mem"
    for t in 1 2; do
        "$RIFFLE" --seed=5 --header=3 --threads=$t --memory=1M -T "$T/tmp" < "$T/in" > "$T/ext"
        cmp "$T/mem" "$T/ext"
    done
    tr '\n' '\0' < "$T/in" > "$T/inz"
    same_for_threads 1M --seed=5 -z "$T/inz"
}

@test "records longer than a bucket buffer keep their place" {
    # 8 KiB buffers at --memory=64K; some records of 10-40 KB among short ones
    awk 'BEGIN { for (i = 1; i <= 3000; i++) {
        n = (i % 97 == 0) ? 10000 + (i * 131) % 30000 : i % 60
        s = ""; for (j = 0; j < n; j++) s = s sprintf("%c", 97 + (i + j) % 26)
        print i " " s } }' > "$T/long"
    same_for_threads 64K --seed=6 "$T/long"
    same_for_threads 200K --seed=6 "$T/long"
}

@test "a full disk on the writer thread: the file named, exit 1, nothing left" {
    export RIFFLE_NAMED_TEMPS=1   # named temporaries: their names are what is checked
    mkdir -p "$T/small"
    mount -t tmpfs -o size=256k tmpfs "$T/small" 2> /dev/null || skip "cannot mount a small tmpfs here"
    for t in 1 2; do
        echo original > "$T/out"
        run "$RIFFLE" --threads=$t --memory=1M -T "$T/small" -o "$T/out" "$T/in"
        left=$(ls -A "$T/small")
        [ "$status" -eq 1 ]
        [[ "$output" == "riffle: $T/small/riffle-"*": No space left on device" ]]
        [ -z "$left" ]
        [ "$(cat "$T/out")" = original ]
    done
    umount "$T/small"
}

@test "a file size limit (EFBIG) on the writer thread is reported the same way" {
    export RIFFLE_NAMED_TEMPS=1   # named temporaries: their names are what is checked
    for t in 1 2; do
        echo original > "$T/out"
        # 64 KiB files at most: the bucket files (written first) outgrow it
        run bash -c "trap '' XFSZ; ulimit -f 64; exec \"$RIFFLE\" --threads=$t --memory=1M -T \"$T/tmp\" -o \"$T/out\" \"$T/in\""
        [ "$status" -eq 1 ]
        [[ "$output" == "riffle: $T/tmp/riffle-"*": File too large" ]]
        [ -z "$(ls -A "$T/tmp")" ]
        [ "$(cat "$T/out")" = original ]
    done
}

@test "a reader that goes away (riffle | head) ends riffle quietly and leaves no bucket files" {
    # SIGPIPE as shuf: death by the signal (141), nothing on stderr; the
    # handler removes the temporary directory first.  (If the test runner
    # ignores SIGPIPE, riffle sees EPIPE instead: an error, but still clean.)
    run bash -c "trap - PIPE; '$RIFFLE' --seed=1 --memory=64K -T '$T/tmp' '$T/in' 2>'$T/err' | head -n 1 > /dev/null; echo \${PIPESTATUS[0]}"
    [ "$status" -eq 0 ]
    [ "$output" = 141 ] || [ "$output" = 1 ]
    if [ "$output" = 141 ]; then [ ! -s "$T/err" ]; fi
    [ -z "$(ls -A "$T/tmp")" ]
}

@test "with SIGPIPE ignored, a closed pipe (EPIPE) ends the run: exit 1, reported, nothing left" {
    # As shuf ends on EPIPE: "write error: Broken pipe", status 1; the
    # buckets not yet ordered are skipped (the error sticks in the output).
    run bash -c "trap '' PIPE; '$RIFFLE' --seed=1 --memory=64K -T '$T/tmp' '$T/in' 2> '$T/err' | head -n 1 > /dev/null; echo \${PIPESTATUS[0]}"
    [ "$status" -eq 0 ]
    [ "${lines[-1]}" = 1 ]
    [ "$(cat "$T/err")" = "riffle: write error: Broken pipe" ]
    [ -z "$(ls -A "$T/tmp")" ]
}
