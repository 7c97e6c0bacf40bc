#!/usr/bin/env bats
# --key --split at any size: the engine's full shuffle routed record by
# record to the part of its key.  The parts are byte for byte those of the
# in-memory split (which compressed parts still take: their reference
# here), whatever --memory (the external engine under a tiny one),
# --threads, -z, --header, compressed or several inputs; errors leave no
# part and no temporary behind.

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    export RIFFLE_NAMED_TEMPS=1 # the parts' temporaries visible in the directory
    T="$BATS_TEST_TMPDIR"
    mkdir -p "$T/tmp" "$T/out"
    # ~1 MB: 30000 records over 700 keys, lines of varied length
    awk 'BEGIN { for (i = 1; i <= 30000; i++) {
        s = ""; for (j = 0; j < i % 37; j++) s = s sprintf("%c", 97 + (i * j) % 26)
        printf "u%d\t%d\t%s\n", (i * 7919) % 700, i, s } }' > "$T/in"
}

# The in-memory split of SEED SPEC ARGS... into $T/m0 .. (gzip parts, read back).
reference() { # seed spec n-parts args...
    local seed=$1 spec=$2 n=$3 i
    shift 3
    "$RIFFLE" --seed="$seed" --key=1 --split="$spec" --output-pattern="$T/m%d.gz" "$@"
    for ((i = 0; i < n; i++)); do gzip -dc "$T/m$i.gz" > "$T/m$i"; done
}

# The routed parts $T/r0 .. equal the reference's.
same_parts() { # n-parts
    local i
    for ((i = 0; i < $1; i++)); do cmp "$T/m$i" "$T/r$i"; done
}

nothing_left() {
    [ -z "$(ls -A "$T/tmp")" ]
    [ -z "$(ls -A "$T/out")" ]
}

@test "routed: the in-memory split's bytes under every --memory and --threads" {
    reference 3 70%,20%,10% 3 "$T/in"
    [ -s "$T/m0" ] && [ -s "$T/m1" ] && [ -s "$T/m2" ]
    for mem in 64K 256K 1M 64M; do
        for t in 1 2; do
            "$RIFFLE" --seed=3 --key=1 --split=70%,20%,10% --memory=$mem --threads=$t \
                -T "$T/tmp" --output-pattern="$T/r%d" "$T/in"
            same_parts 3
        done
    done
    [ -z "$(ls -A "$T/tmp")" ]
    # the full shuffle's order inside each part, found without the reference
    "$RIFFLE" --seed=3 "$T/in" > "$T/full"
    for i in 0 1 2; do grep -Fxf "$T/r$i" "$T/full" | cmp - "$T/r$i"; done
    cat "$T/r0" "$T/r1" "$T/r2" | sort | cmp - <(sort "$T/in")
}

@test "routed: standard input, several files, an unterminated last record of each" {
    head -c 400000 "$T/in" > "$T/a"   # ends inside a record
    tail -c +400001 "$T/in" | head -c 300000 > "$T/b"
    printf 'u5\tlast\tunterminated' > "$T/c"
    [ "$(tail -c 1 "$T/a" | od -An -c | tr -d ' ')" != '\n' ]
    reference 8 4 4 "$T/a" "$T/b" "$T/c"
    "$RIFFLE" --seed=8 --key=1 --split=4 --memory=64K --output-pattern="$T/r%d" \
        "$T/a" "$T/b" "$T/c"
    same_parts 4
    grep -qx "$(printf 'u5\tlast\tunterminated')" "$T"/r?
    cat "$T/a" "$T/b" | "$RIFFLE" --seed=8 --key=1 --split=4 --memory=64K \
        --output-pattern="$T/s%d" - "$T/c"
    # a and b joined: the record cut between them is whole again
    cat "$T/a" "$T/b" > "$T/ab"
    reference 8 4 4 "$T/ab" "$T/c"
    for i in 0 1 2 3; do cmp "$T/m$i" "$T/s$i"; done
}

@test "routed: --header starts every part; -z; -d" {
    { printf 'user\tn\ttext\nsecond\theader\tline\n'; cat "$T/in"; } > "$T/h"
    reference 5 3 3 --header=2 "$T/h"
    "$RIFFLE" --seed=5 --key=1 --split=3 --header=2 --memory=64K --output-pattern="$T/r%d" "$T/h"
    same_parts 3
    for i in 0 1 2; do
        [ "$(head -n 2 "$T/r$i")" = "$(printf 'user\tn\ttext\nsecond\theader\tline')" ]
    done
    # a header only, unterminated: every part is the header, terminated
    printf 'only\theader' > "$T/ho"
    "$RIFFLE" --seed=5 --key=1 --split=2 --header=1 --output-pattern="$T/r%d" "$T/ho"
    printf 'only\theader\n' | cmp - "$T/r0"
    cmp "$T/r0" "$T/r1"
    tr '\n' '\0' < "$T/in" > "$T/z"
    reference 6 2 2 -z "$T/z"
    "$RIFFLE" -z --seed=6 --key=1 --split=2 --memory=64K --threads=2 --output-pattern="$T/r%d" "$T/z"
    same_parts 2
    tr '\t' , < "$T/in" > "$T/csv"
    reference 6 50%,50% 2 -d , "$T/csv"
    "$RIFFLE" --seed=6 --key=1 -d , --split=50%,50% --memory=64K --output-pattern="$T/r%d" "$T/csv"
    same_parts 2
}

@test "routed: compressed inputs give the parts of their decompressed bytes" {
    reference 4 3 3 "$T/in"
    gzip -c "$T/in" > "$T/in.gz"
    zstd -q -c "$T/in" > "$T/in.zst"
    for f in "$T/in.gz" "$T/in.zst"; do
        for mem in 64K 64M; do
            "$RIFFLE" --seed=4 --key=1 --split=3 --memory=$mem --output-pattern="$T/r%d" "$f"
            same_parts 3
        done
    done
    # a corrupt one: an error, no part
    head -c 20000 "$T/in.gz" > "$T/cut.gz"
    run "$RIFFLE" --seed=4 --key=1 --split=3 --memory=64K -T "$T/tmp" \
        --output-pattern="$T/out/p%d" "$T/cut.gz"
    [ "$status" -eq 1 ]
    [[ "$output" == "riffle: $T/cut.gz: "* ]]
    nothing_left
}

@test "routed: a keyless record is named by file and line; no part, no temporary" {
    head -n 20000 "$T/in" > "$T/a"
    { tail -n +20001 "$T/in" | head -n 5000; printf 'nokey\n'; tail -n 100 "$T/in"; } > "$T/b"
    for mem in 64K 64M; do
        run "$RIFFLE" --seed=1 --key=2 --split=2 --memory=$mem -T "$T/tmp" \
            --output-pattern="$T/out/p%d" "$T/a" "$T/b"
        [ "$status" -eq 1 ]
        [ "$output" = "riffle: $T/b:5001: missing key field 2" ]
        nothing_left
    done
    # --header lines need no key; lines count from the top of their file
    run "$RIFFLE" --seed=1 --key=2 --split=2 --header=1 --output-pattern="$T/out/p%d" "$T/b"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/b:5001: missing key field 2" ]
    printf 'nokey\n' | cat - "$T/b" > "$T/hb"
    run "$RIFFLE" --seed=1 --key=2 --split=2 --header=1 --output-pattern="$T/out/p%d" "$T/hb"
    [ "$output" = "riffle: $T/hb:5002: missing key field 2" ]
    # compressed: the line of the decompressed bytes
    gzip -c "$T/b" > "$T/b.gz"
    run "$RIFFLE" --seed=1 --key=2 --split=2 --memory=64K --output-pattern="$T/out/p%d" "$T/b.gz"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/b.gz:5001: missing key field 2" ]
    # standard input cannot be read again: the record is quoted
    run sh -c '"$1" --seed=1 --key=2 --split=2 --memory=64K -T "$2/tmp" \
        --output-pattern="$2/out/p%d" < "$3"' sh "$RIFFLE" "$T" "$T/b"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: missing key field 2 in the record 'nokey'" ]
    nothing_left
}

@test "routed: a part that cannot be written fails the run, nothing committed" {
    [ -w /dev/full ] || skip "no /dev/full"
    echo keep > "$T/out/p0"
    run "$RIFFLE" --seed=1 --key=1 --split=2 --memory=64K -T "$T/tmp" \
        --output-pattern="$T/out/p0,/dev/full" "$T/in"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: /dev/full: No space left on device" ]
    [ "$(cat "$T/out/p0")" = keep ]
    [ "$(ls -A "$T/out")" = p0 ]
    [ -z "$(ls -A "$T/tmp")" ]
}

@test "routed: many parts, each key in one" {
    "$RIFFLE" --seed=2 --key=1 --split=300 --memory=64K --output-pattern="$T/out/p%03d" "$T/in"
    [ "$(ls "$T/out" | wc -l)" -eq 300 ]
    cat "$T"/out/p* | sort | cmp - <(sort "$T/in")
    for f in "$T"/out/p*; do cut -f1 "$f" | sort -u; done | sort | uniq -d | { ! grep -q .; }
}
