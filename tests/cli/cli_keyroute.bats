#!/usr/bin/env bats
# --key --split at any size: the engine's full shuffle routed record by
# record to the part of its key.  The parts are checked against a reference
# built without either split: `riffle sample --key --prob=P` chooses the
# keys whose unit value (the same keyed hash) is below P, so part i holds
# the keys between the cumulative fractions, in the order of the full
# shuffle.  Against the in-memory split too (-e, and more compressed parts
# than are routed).  Whatever --memory (the external engine under a tiny
# one), --threads, -z, --header, compressed or several inputs; errors leave
# no part and no temporary behind.

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

# The parts $T/m0 .. of seed SEED and the cumulative fractions CUTS (all but
# the last part's: "0.7 0.9" for 70%,20%,10%) for the input FILES (TAB
# fields, key 1): the full shuffle's lines, each in the part of its key.
reference() { # seed "cuts" files...
    local seed=$1 cuts=$2 c i=0
    shift 2
    "$RIFFLE" --seed="$seed" "$@" > "$T/full"
    : > "$T/below"
    for c in $cuts; do
        "$RIFFLE" sample --seed="$seed" --key=1 --prob="$c" "$@" | cut -f1 | sort -u > "$T/k$i"
        # keys below this cut and not below the last one
        comm -23 "$T/k$i" "$T/below" > "$T/only"
        awk -F'\t' 'NR == FNR { k[$1]; next } ($1 in k)' "$T/only" "$T/full" > "$T/m$i"
        cp "$T/k$i" "$T/below"
        i=$((i + 1))
    done
    awk -F'\t' 'NR == FNR { k[$1]; next } !($1 in k)' "$T/below" "$T/full" > "$T/m$i"
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

@test "routed: the reference's bytes under every --memory and --threads" {
    reference 3 "0.7 0.9" "$T/in"
    [ -s "$T/m0" ] && [ -s "$T/m1" ] && [ -s "$T/m2" ]
    for mem in 64K 256K 1M 64M; do
        for t in 1 2; do
            "$RIFFLE" --seed=3 --key=1 --split=70%,20%,10% --memory=$mem --threads=$t \
                -T "$T/tmp" --output-pattern="$T/r%d" "$T/in"
            same_parts 3
        done
    done
    [ -z "$(ls -A "$T/tmp")" ]
    cat "$T/r0" "$T/r1" "$T/r2" | sort | cmp - <(sort "$T/in")
}

@test "routed: the in-memory split's bytes (-e; more compressed parts than are routed)" {
    "$RIFFLE" --seed=3 --key=1 --split=4 --output-pattern="$T/r%d" "$T/in"
    # -e: the records held in memory, one argument each
    head -n 2000 "$T/in" > "$T/few"
    mapfile -t recs < "$T/few"
    "$RIFFLE" --seed=3 --key=1 --split=4 --output-pattern="$T/e%d" -e "${recs[@]}"
    "$RIFFLE" --seed=3 --key=1 --split=4 --memory=64K --output-pattern="$T/f%d" "$T/few"
    for i in 0 1 2 3; do cmp "$T/e$i" "$T/f$i"; done
    # 65 gzip parts: the in-memory split; 65 plain ones: routed
    "$RIFFLE" --seed=3 --key=1 --split=65 --output-pattern="$T/out/g%02d.gz" "$T/in"
    "$RIFFLE" --seed=3 --key=1 --split=65 --memory=64K --output-pattern="$T/out/p%02d" "$T/in"
    for i in $(seq -w 0 64); do gzip -dc "$T/out/g$i.gz" | cmp - "$T/out/p$i"; done
    # 4 gzip parts are routed, each through its own compressor
    "$RIFFLE" --seed=3 --key=1 --split=4 --memory=64K --output-pattern="$T/z%d.gz" "$T/in"
    for i in 0 1 2 3; do gzip -dc "$T/z$i.gz" | cmp - "$T/r$i"; done
}

@test "routed: standard input, several files, an unterminated last record of each" {
    head -c 400000 "$T/in" > "$T/a"   # ends inside a record
    tail -c +400001 "$T/in" | head -c 300000 > "$T/b"
    printf 'u5\tlast\tunterminated' > "$T/c"
    [ "$(tail -c 1 "$T/a" | od -An -c | tr -d ' ')" != '\n' ]
    reference 8 "0.25 0.5 0.75" "$T/a" "$T/b" "$T/c"
    "$RIFFLE" --seed=8 --key=1 --split=4 --memory=64K --output-pattern="$T/r%d" \
        "$T/a" "$T/b" "$T/c"
    same_parts 4
    grep -qx "$(printf 'u5\tlast\tunterminated')" "$T"/r?
    cat "$T/a" "$T/b" | "$RIFFLE" --seed=8 --key=1 --split=4 --memory=64K \
        --output-pattern="$T/s%d" - "$T/c"
    # a and b joined: the record cut between them is whole again
    cat "$T/a" "$T/b" > "$T/ab"
    reference 8 "0.25 0.5 0.75" "$T/ab" "$T/c"
    for i in 0 1 2 3; do cmp "$T/m$i" "$T/s$i"; done
    # records longer than the router's 1 MiB reads, and than --memory
    { head -n 100 "$T/in"; printf 'u7\tlong\t'; head -c 3000000 /dev/zero | tr '\0' x; echo
      printf 'u8\tlong\t'; head -c 1500000 /dev/zero | tr '\0' y; echo; } > "$T/long"
    reference 8 "0.25 0.5 0.75" "$T/long"
    "$RIFFLE" --seed=8 --key=1 --split=4 --memory=64K --output-pattern="$T/r%d" "$T/long"
    same_parts 4
}

@test "routed: --header starts every part; -z; -d" {
    reference 5 "0.5" "$T/in"
    { printf 'user\tn\ttext\nsecond\theader\tline\n'; cat "$T/in"; } > "$T/h"
    "$RIFFLE" --seed=5 --key=1 --split=2 --header=2 --memory=64K --output-pattern="$T/r%d" "$T/h"
    for i in 0 1; do
        [ "$(head -n 2 "$T/r$i")" = "$(printf 'user\tn\ttext\nsecond\theader\tline')" ]
        tail -n +3 "$T/r$i" | cmp - "$T/m$i"
    done
    # a header only, unterminated: every part is the header, terminated
    printf 'only\theader' > "$T/ho"
    "$RIFFLE" --seed=5 --key=1 --split=2 --header=1 --output-pattern="$T/r%d" "$T/ho"
    printf 'only\theader\n' | cmp - "$T/r0"
    cmp "$T/r0" "$T/r1"
    # -z and -d: the same records, delimited otherwise, in the same parts
    tr '\n' '\0' < "$T/in" > "$T/z"
    "$RIFFLE" -z --seed=5 --key=1 --split=2 --memory=64K --threads=2 --output-pattern="$T/r%d" "$T/z"
    for i in 0 1; do tr '\0' '\n' < "$T/r$i" | cmp - "$T/m$i"; done
    tr '\t' , < "$T/in" > "$T/csv"
    "$RIFFLE" --seed=5 --key=1 -d , --split=50%,50% --memory=64K --output-pattern="$T/r%d" "$T/csv"
    for i in 0 1; do tr , '\t' < "$T/r$i" | cmp - "$T/m$i"; done
}

@test "routed: compressed inputs give the parts of their decompressed bytes" {
    reference 4 "0.25 0.5 0.75" "$T/in"
    gzip -c "$T/in" > "$T/in.gz"
    zstd -q -c "$T/in" > "$T/in.zst"
    for f in "$T/in.gz" "$T/in.zst"; do
        for mem in 64K 64M; do
            "$RIFFLE" --seed=4 --key=1 --split=4 --memory=$mem --output-pattern="$T/r%d" "$f"
            same_parts 4
        done
    done
    # a corrupt one: an error, no part
    head -c 20000 "$T/in.gz" > "$T/cut.gz"
    for parts in "$T/out/p%d" "$T/out/p%d.zst"; do
        run "$RIFFLE" --seed=4 --key=1 --split=3 --memory=64K -T "$T/tmp" \
            --output-pattern="$parts" "$T/cut.gz"
        [ "$status" -eq 1 ]
        [[ "$output" == "riffle: $T/cut.gz: "* ]]
        nothing_left
    done
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
    # a compressed part: its compressor's write error
    run "$RIFFLE" --seed=1 --key=1 --split=2 --compress=gzip --memory=64K -T "$T/tmp" \
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

@test "routed --csv: records with quoted newlines, keys by column name, as in memory" {
    awk 'BEGIN { print "id,user,\"the text\""
        for (i = 1; i <= 6000; i++) {
            u = (i * 7919) % 300
            if (i % 5 == 0) printf "%d,\"u%d\",\"two\nlines, \"\"quoted\"\"\"\n", i, u
            else printf "%d,u%d,plain %d\n", i, u, i } }' > "$T/in.csv"
    # 65 gzip parts: the in-memory split, the reference
    "$RIFFLE" --csv --header=1 --seed=9 --key=user --split=65 \
        --output-pattern="$T/out/g%02d.csv.gz" "$T/in.csv"
    for mem in 64K 64M; do
        for t in 1 2; do
            "$RIFFLE" --csv --header=1 --seed=9 --key=user --split=65 --memory=$mem \
                --threads=$t --output-pattern="$T/out/p%02d.csv" "$T/in.csv"
            for i in $(seq -w 0 64); do gzip -dc "$T/out/g$i.csv.gz" | cmp - "$T/out/p$i.csv"; done
        done
    done
    # a record without the column, at the line where it starts (after a
    # record of two lines): found again in input order
    { head -n 8 "$T/in.csv"; printf 'short\n'; tail -n +9 "$T/in.csv"; } > "$T/bad.csv"
    rm -f "$T"/out/*
    run "$RIFFLE" --csv --header=1 --seed=9 --key=user --split=2 --memory=64K -T "$T/tmp" \
        --output-pattern="$T/out/p%d" "$T/bad.csv"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/bad.csv:9: missing key column 'user'" ]
    nothing_left
}
