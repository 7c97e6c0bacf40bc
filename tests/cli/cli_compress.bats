#!/usr/bin/env bats
# Compressed inputs and outputs: gzip and zstd inputs are recognised by their
# first bytes and read as their decompressed bytes (riffle --seed=S f.gz
# writes exactly what zcat f.gz | riffle --seed=S writes, in every engine);
# -o FILE.gz / FILE.zst, compressed --split parts and --compress; corrupt
# and truncated inputs are errors naming the file and the byte, and nothing
# is written.

bats_require_minimum_version 1.5.0

load ../lib/bg_jobs

teardown() {
    bg_cleanup
}

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    : "${BUILD:=$(dirname "$RIFFLE")}"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
    mkdir -p "$T/tmp"
    # ~300 KB of varied lines
    awk 'BEGIN { for (i = 1; i <= 20000; i++) {
        s = ""; for (j = 0; j < i % 29; j++) s = s sprintf("%c", 97 + (i * j) % 26)
        print s " " i } }' > "$T/in"
    gzip -c "$T/in" > "$T/in.gz"
    zstd -q -c "$T/in" > "$T/in.zst"
}

# The plain-input output for "$@" from a pipe, and the same from each
# compressed file, must be the same bytes.
same_as_pipe() {
    "$RIFFLE" "$@" < "$T/in" > "$T/want"
    "$RIFFLE" "$@" "$T/in.gz" > "$T/got"
    cmp "$T/want" "$T/got"
    "$RIFFLE" "$@" "$T/in.zst" > "$T/got"
    cmp "$T/want" "$T/got"
}

# status, stdout and stderr of a run that must fail
fails() {
    run --separate-stderr "$RIFFLE" "$@"
    [ "$status" -eq 1 ] || { echo "status $status"; false; }
    [ -z "$output" ] || { echo "stdout: $output"; false; }
}

@test "gzip and zstd inputs give the output of their decompressed bytes, in every engine" {
    same_as_pipe --seed=1
    same_as_pipe --seed=1 --memory=4K -T "$T/tmp"
    same_as_pipe --seed=1 --memory=64K --threads=2 -T "$T/tmp"
    same_as_pipe --seed=1 --threads=1
    same_as_pipe --seed=x -n 7
    same_as_pipe --seed=x -n 7 --memory=1K -T "$T/tmp"
    same_as_pipe --seed=2 --header=3 --rng=pcg64
    [ -z "$(ls -A "$T/tmp")" ]
}

@test "the first bytes tell, not the name; standard input too, piped or redirected" {
    cp "$T/in.gz" "$T/data.bin"
    cp "$T/in.zst" "$T/other.txt"
    "$RIFFLE" --seed=3 < "$T/in" > "$T/want"
    "$RIFFLE" --seed=3 "$T/data.bin" | cmp "$T/want" -
    "$RIFFLE" --seed=3 "$T/other.txt" | cmp "$T/want" -
    "$RIFFLE" --seed=3 < "$T/in.gz" | cmp "$T/want" -
    cat "$T/in.zst" | "$RIFFLE" --seed=3 | cmp "$T/want" -
    cat "$T/in.gz" | "$RIFFLE" --seed=3 - | cmp "$T/want" -
    # a pipe after other inputs is read as it is (riffle does not wait for
    # its first bytes before reading the inputs ahead of it)
    : > "$T/empty"
    cat "$T/in.gz" | "$RIFFLE" "$T/empty" - | sort > "$T/got"
    { cat "$T/in.gz"; [ -z "$(tail -c 1 "$T/in.gz")" ] || echo; } | sort | cmp "$T/got" -
    # a plain file named .gz is read as it is
    cp "$T/in" "$T/plain.gz"
    "$RIFFLE" --seed=3 "$T/plain.gz" | cmp "$T/want" -
}

@test "several inputs mix compressed and plain; gzip members and zstd frames concatenate" {
    head -n 5000 "$T/in" > "$T/a"
    sed -n '5001,12000p' "$T/in" | gzip -c > "$T/b.gz"
    sed -n '12001,16000p' "$T/in" | zstd -q -c > "$T/c.zst"
    tail -n +16001 "$T/in" > "$T/d"
    for m in "" --memory=2K; do
        "$RIFFLE" --seed=4 $m -T "$T/tmp" < "$T/in" > "$T/want"
        "$RIFFLE" --seed=4 $m -T "$T/tmp" "$T/a" "$T/b.gz" "$T/c.zst" "$T/d" | cmp "$T/want" -
    done
    # gzip members, zstd frames (and a skippable frame) one after another
    { head -n 100 "$T/in" | gzip -c; tail -n +101 "$T/in" | gzip -c; } > "$T/members.gz"
    { head -n 100 "$T/in" | zstd -q -c; printf '\x50\x2a\x4d\x18\x03\x00\x00\x00abc'
      tail -n +101 "$T/in" | zstd -q -c; } > "$T/frames.zst"
    "$RIFFLE" --seed=4 "$T/members.gz" | cmp "$T/want" -
    "$RIFFLE" --seed=4 "$T/frames.zst" | cmp "$T/want" -
}

@test "-r and -n 0 take compressed inputs too" {
    "$RIFFLE" --seed=5 -r -n 50 "$T/in" > "$T/want"
    "$RIFFLE" --seed=5 -r -n 50 "$T/in.gz" | cmp "$T/want" -
    "$RIFFLE" --seed=5 -r -n 50 "$T/in.zst" | cmp "$T/want" -
    "$RIFFLE" --seed=5 -n 0 "$T/in.gz" -o "$T/none"
    [ -f "$T/none" ] && [ ! -s "$T/none" ]
}

@test "-o FILE.gz and FILE.zst are compressed; --compress overrides the name" {
    "$RIFFLE" --seed=6 "$T/in" > "$T/want"
    "$RIFFLE" --seed=6 "$T/in" -o "$T/o.gz"
    [ "$(od -An -tx1 -N2 "$T/o.gz" | tr -d ' ')" = 1f8b ]
    gzip -t "$T/o.gz"
    zcat "$T/o.gz" | cmp "$T/want" -
    "$RIFFLE" --seed=6 --threads=2 "$T/in.gz" -o "$T/o.zst"
    [ "$(od -An -tx1 -N4 "$T/o.zst" | tr -d ' ')" = 28b52ffd ]
    zstd -q -t "$T/o.zst"
    zstdcat "$T/o.zst" | cmp "$T/want" -
    "$RIFFLE" --seed=6 --compress=gzip "$T/in" -o "$T/o.zst"
    zcat "$T/o.zst" | cmp "$T/want" -
    "$RIFFLE" --seed=6 --compress=none "$T/in" -o "$T/o.gz"
    cmp "$T/want" "$T/o.gz"
    "$RIFFLE" --seed=6 --compress=zstd "$T/in" | zstdcat | cmp "$T/want" -
    # standard output stays plain without --compress
    "$RIFFLE" --seed=6 "$T/in.zst" | cmp "$T/want" -
    # external engine into a compressed file
    "$RIFFLE" --seed=6 --memory=8K -T "$T/tmp" "$T/in.zst" -o "$T/ext.gz"
    zcat "$T/ext.gz" | cmp "$T/want" -
    # an empty output is a valid compressed file of nothing
    "$RIFFLE" -n 0 "$T/in" -o "$T/empty.zst"
    zstd -q -t "$T/empty.zst"
    [ -z "$(zstdcat "$T/empty.zst")" ]
}

@test "a compressed input may be replaced by its own compressed output" {
    "$RIFFLE" --seed=7 "$T/in" > "$T/want"
    "$RIFFLE" --seed=7 "$T/in.gz" -o "$T/in.gz"
    zcat "$T/in.gz" | cmp "$T/want" -
}

@test "--split parts are compressed by their names, each with the header" {
    "$RIFFLE" --seed=8 --header=1 "$T/in" > "$T/want"
    "$RIFFLE" --seed=8 --header=1 --split=3 --output-pattern="$T/p-%02d.jsonl.zst" "$T/in.gz"
    for i in 00 01 02; do
        zstd -q -t "$T/p-$i.jsonl.zst"
        [ "$(zstdcat "$T/p-$i.jsonl.zst" | head -n 1)" = "$(head -n 1 "$T/want")" ]
    done
    { head -n 1 "$T/want"
      for i in 00 01 02; do zstdcat "$T/p-$i.jsonl.zst" | tail -n +2; done; } | cmp "$T/want" -
    # names choose per part; --compress chooses for all
    "$RIFFLE" --seed=8 --split=80%,10%,10% --memory=4K -T "$T/tmp" \
        --output-pattern="$T/train.gz,$T/valid.txt,$T/test.zst" "$T/in.zst"
    "$RIFFLE" --seed=8 "$T/in" > "$T/want"
    { zcat "$T/train.gz"; cat "$T/valid.txt"; zstdcat "$T/test.zst"; } | cmp "$T/want" -
    "$RIFFLE" --seed=8 --split=2 --compress=gzip --output-pattern="$T/g%d" "$T/in"
    { zcat "$T/g0"; zcat "$T/g1"; } | cmp "$T/want" -
    # an empty part is an empty compressed stream
    "$RIFFLE" --seed=8 --split=0,* --output-pattern="$T/e%d.gz" "$T/in"
    gzip -t "$T/e0.gz"
    [ -z "$(zcat "$T/e0.gz")" ]
    [ -z "$(ls -A "$T/tmp")" ]
}

@test "many compressed split parts" {
    "$RIFFLE" --seed=9 "$T/in" > "$T/want"
    "$RIFFLE" --seed=9 --split=200 --output-pattern="$T/m%03d.zst" "$T/in"
    for i in $(seq -w 0 199); do zstdcat "$T/m$i.zst"; done | cmp "$T/want" -
}

@test "--compress takes gzip, zstd or none, once" {
    run "$RIFFLE" --compress=bz2 "$T/in"
    [ "$status" -eq 1 ]
    [[ "$output" == *"invalid compression format"*"bz2"* ]]
    [[ "$output" == *"Try 'riffle --help'"* ]]
    run "$RIFFLE" --compress=gzip --compress=zstd "$T/in"
    [ "$status" -eq 1 ]
    [[ "$output" == *"multiple compression formats specified"* ]]
    "$RIFFLE" --compress=gzip --compress=gzip "$T/in" -o "$T/x" && zcat "$T/x" > /dev/null
}

# A corrupt input: status 1, the message names the file and a byte, nothing
# on stdout, -o and every split part left as they were, no temporaries, in
# every engine.
corrupt() { # file pattern
    local f=$1 want=$2 m
    rm -rf "$T/o" && mkdir "$T/o"
    for m in "" "--memory=2K" "-n 3" "-r -n 3"; do
        fails --seed=1 $m -T "$T/tmp" "$T/in" "$f"
        [[ "$stderr" =~ $want ]] || { echo "[$m] stderr: $stderr"; false; }
        echo old > "$T/o/out"
        fails --seed=1 $m -T "$T/tmp" "$f" -o "$T/o/out"
        [ "$(cat "$T/o/out")" = old ]
    done
    fails --seed=1 --split=2 --output-pattern="$T/o/part%d.gz" "$f"
    [ "$(ls -A "$T/o")" = out ]
    [ -z "$(ls -A "$T/tmp")" ]
}

@test "truncated gzip and zstd inputs are errors with the offset" {
    head -c 5000 "$T/in.gz" > "$T/bad.gz"
    corrupt "$T/bad.gz" "^riffle: $T/bad.gz: truncated gzip data at byte 5000$"
    head -c 5000 "$T/in.zst" > "$T/bad.zst"
    corrupt "$T/bad.zst" "^riffle: $T/bad.zst: truncated zstd data at byte 5000$"
    # a lone magic number
    printf '\x1f\x8b' > "$T/bad2.gz"
    corrupt "$T/bad2.gz" "truncated gzip data at byte 2$"
}

@test "garbage after the magic number, a bad CRC, a bad checksum, trailing garbage" {
    printf '\x1f\x8bnot really gzip\n' > "$T/bad.gz"
    corrupt "$T/bad.gz" "^riffle: $T/bad.gz: invalid gzip data at byte [0-9]+: unknown compression method$"
    printf '\x28\xb5\x2f\xfdnot really zstd\n' > "$T/bad.zst"
    corrupt "$T/bad.zst" "^riffle: $T/bad.zst: invalid zstd data at byte [0-9]+: "
    # the CRC-32 is the trailer's first 4 bytes (RFC 1952, 2.3.1)
    local n
    n=$(stat -c %s "$T/in.gz")
    cp "$T/in.gz" "$T/crc.gz"
    printf '\xff\xff\xff\xff' | dd of="$T/crc.gz" bs=1 seek=$((n - 8)) conv=notrunc 2>/dev/null
    corrupt "$T/crc.gz" "^riffle: $T/crc.gz: invalid gzip data at byte $((n - 4)): incorrect data check$"
    # zstd's content checksum is the frame's last 4 bytes
    n=$(stat -c %s "$T/in.zst")
    cp "$T/in.zst" "$T/sum.zst"
    printf '\x00\x00\x00\x00' | dd of="$T/sum.zst" bs=1 seek=$((n - 4)) conv=notrunc 2>/dev/null
    corrupt "$T/sum.zst" "^riffle: $T/sum.zst: invalid zstd data at byte [0-9]+: .*checksum"
    { cat "$T/in.gz"; echo trailing; } > "$T/tail.gz"
    corrupt "$T/tail.gz" "^riffle: $T/tail.gz: invalid gzip data at byte [0-9]+: "
}

@test "a corrupt compressed standard input is an error too" {
    head -c 3000 "$T/in.zst" > "$T/bad.zst"
    run --separate-stderr "$RIFFLE" --seed=1 - < "$T/bad.zst"
    [ "$status" -eq 1 ] && [ -z "$output" ]
    [ "$stderr" = "riffle: -: truncated zstd data at byte 3000" ]
    run --separate-stderr sh -c 'cat "$1" | "$2" --seed=1' sh "$T/bad.zst" "$RIFFLE"
    [ "$status" -eq 1 ] && [ -z "$output" ]
    [ "$stderr" = "riffle: -: truncated zstd data at byte 3000" ]
}

@test "invoked as shuf, compressed bytes are lines like any others" {
    "$BUILD/shuf" "$T/in.gz" | sort > "$T/got"
    { cat "$T/in.gz"; [ -z "$(tail -c 1 "$T/in.gz")" ] || echo; } | sort | cmp "$T/got" -
    "$BUILD/shuf" -o "$T/s.gz" "$T/in"
    sort "$T/s.gz" | cmp <(sort "$T/in") -
}

# As tests/cli/cli_changes.bats does it, without timing: the FIFO after the
# compressed input is opened only once that input is read to its end.
@test "a compressed input that changes while it is read fails the run, -o untouched" {
    local e pid
    mkfifo "$T/fifo"
    for e in "" "--memory=16K -T $T/tmp" "-n 5"; do
        cp "$T/in.gz" "$T/c.gz"
        echo original > "$T/out"
        "$RIFFLE" --seed=1 $e -o "$T/out" "$T/c.gz" "$T/fifo" 2> "$T/err" 3>&- &
        pid=$!
        bg_track "$pid"
        exec 9> "$T/fifo"
        truncate -s -40 "$T/c.gz"
        echo last >&9
        exec 9>&-
        bg_reap "$pid"
        [ "$BG_STATUS" -eq 1 ]
        [ "$(cat "$T/err")" = "riffle: $T/c.gz: file changed as we read it" ]
        [ "$(cat "$T/out")" = original ]
    done
    [ -z "$(ls -A "$T/tmp")" ]
}

@test "a signal during a compressed -o leaves the target as it was" {
    local pid
    mkfifo "$T/fifo"
    echo original > "$T/out.zst"
    default_signals "$RIFFLE" --seed=1 "$T/in.gz" "$T/fifo" -o "$T/out.zst" 3>&- &
    pid=$!
    bg_track "$pid"
    exec 9> "$T/fifo"
    kill -TERM "$pid"
    exec 9>&-
    bg_reap "$pid"
    [ "$BG_STATUS" -ne 0 ]
    [ "$(cat "$T/out.zst")" = original ]
    [ "$(ls -A "$T" | grep -c '^out')" -eq 1 ]
}

@test "riffle gather -o OUT.zst: the tasks' compressed outputs concatenate" {
    local i
    mkdir "$T/d"
    for i in 0 1; do "$RIFFLE" scatter --count --task=$i --tasks=2 --dir="$T/d" "$T/in"; done
    for i in 0 1; do "$RIFFLE" scatter --task=$i --tasks=2 --dir="$T/d" --seed=1 "$T/in"; done
    for i in 0 1; do
        "$RIFFLE" gather --task=$i --tasks=2 --dir="$T/d" --seed=1 -o "$T/g$i.zst"
    done
    "$RIFFLE" --seed=1 "$T/in" > "$T/want"
    cat "$T/g0.zst" "$T/g1.zst" | zstdcat | cmp "$T/want" -
    # and riffle reads the two frames as one stream
    cat "$T/g0.zst" "$T/g1.zst" | "$RIFFLE" --seed=2 > "$T/a"
    "$RIFFLE" --seed=2 < "$T/want" | cmp "$T/a" -
}
