#!/usr/bin/env bats
# --lockstep: aligned files (a source and its translation) shuffled in one
# order, each to its own output.  Line j of every output comes from the same
# input line number, on every engine and with --split; files of different
# lengths are refused and no output is replaced.

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
    mkdir -p "$T/tmp"
    # 20000 aligned lines whose lengths differ between the two files, so
    # that the same order cannot come from equal byte offsets
    awk 'BEGIN { for (i = 1; i <= 20000; i++) {
        s = ""; for (j = 0; j < i % 29; j++) s = s "x"
        print "src " i " " s } }' > "$T/src"
    awk 'BEGIN { for (i = 1; i <= 20000; i++) {
        s = ""; for (j = 0; j < (i * 7) % 41; j++) s = s "y"
        print "tgt " i " " s } }' > "$T/tgt"
}

# Every line j of $1 and $2 carries the same input line number (field 2),
# and each output holds every input line once.
aligned() {
    [ "$(wc -l < "$1")" -eq 20000 ]
    [ "$(wc -l < "$2")" -eq 20000 ]
    [ -z "$(paste -d'\t' "$1" "$2" | awk -F'\t' '{ split($1, a, " "); split($2, b, " ")
                                                   if (a[2] != b[2]) print NR }' | head -1)" ]
    [ "$(cut -d' ' -f2 "$1" | sort -n | uniq | wc -l)" -eq 20000 ]
}

@test "two aligned files: one order, each the file's own seeded shuffle" {
    "$RIFFLE" --lockstep --seed=7 "$T/src" "$T/tgt" -o "$T/src.out" -o "$T/tgt.out"
    aligned "$T/src.out" "$T/tgt.out"
    cmp "$T/src.out" <("$RIFFLE" --seed=7 "$T/src")
    cmp "$T/tgt.out" <("$RIFFLE" --seed=7 "$T/tgt")
    ! cmp -s "$T/src.out" "$T/src"   # shuffled, not copied
}

@test "without --seed: one fresh order shared by every file" {
    "$RIFFLE" --lockstep "$T/src" "$T/tgt" "$T/src" -o "$T/a" -o "$T/b" -o "$T/c"
    aligned "$T/a" "$T/b"
    cmp "$T/a" "$T/c"
    "$RIFFLE" --lockstep "$T/src" "$T/tgt" -o "$T/a2" -o "$T/b2"
    aligned "$T/a2" "$T/b2"
    ! cmp -s "$T/a" "$T/a2"   # another run, another key
}

@test "files of different lengths: refused with both counts, no output replaced" {
    head -n 19999 "$T/tgt" > "$T/short"
    echo old > "$T/src.out"
    run "$RIFFLE" --lockstep --seed=1 "$T/src" "$T/short" -o "$T/src.out" -o "$T/t.out"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/short: 19999 records, but $T/src has 20000: --lockstep needs the same number" ]
    [ "$(cat "$T/src.out")" = old ]
    [ ! -e "$T/t.out" ]
    # a third file that differs, after two that agree; -n does not hide it
    run "$RIFFLE" --lockstep --seed=1 -n 5 "$T/src" "$T/tgt" "$T/short" \
        -o "$T/src.out" -o "$T/t.out" -o "$T/s.out"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/short: 19999 records, but $T/src has 20000: --lockstep needs the same number" ]
    [ "$(cat "$T/src.out")" = old ]
    [ ! -e "$T/t.out" ] && [ ! -e "$T/s.out" ]
    [ -z "$(ls -A "$T" | grep -v -e '^src' -e '^tgt$' -e '^short$' -e '^tmp$')" ]
}

@test "--split: the same parts for every file, each as the file's own split" {
    "$RIFFLE" --lockstep --seed=3 --split=80%,10%,10% \
        --output-pattern="$T/src.%d" --output-pattern="$T/tr.txt,$T/va.txt,$T/te.txt" \
        "$T/src" "$T/tgt"
    cat "$T/src.0" "$T/src.1" "$T/src.2" > "$T/s.all"
    cat "$T/tr.txt" "$T/va.txt" "$T/te.txt" > "$T/t.all"
    aligned "$T/s.all" "$T/t.all"
    [ "$(wc -l < "$T/src.1")" -eq 2000 ] && [ "$(wc -l < "$T/va.txt")" -eq 2000 ]
    paste -d'\t' "$T/src.2" "$T/te.txt" | awk -F'\t' '{ split($1, a, " "); split($2, b, " ")
                                                         if (a[2] != b[2]) exit 1 }'
    "$RIFFLE" --seed=3 --split=80%,10%,10% --output-pattern="$T/one.%d" "$T/tgt"
    cmp "$T/one.0" "$T/tr.txt" && cmp "$T/one.1" "$T/va.txt" && cmp "$T/one.2" "$T/te.txt"
}

@test "the external engine writes the same bytes, and leaves no temporary file" {
    "$RIFFLE" --lockstep --seed=9 "$T/src" "$T/tgt" -o "$T/s.mem" -o "$T/t.mem"
    for m in 1K 64K; do
        "$RIFFLE" --lockstep --seed=9 --memory=$m -T "$T/tmp" "$T/src" "$T/tgt" \
            -o "$T/s.ext" -o "$T/t.ext"
        cmp "$T/s.mem" "$T/s.ext"
        cmp "$T/t.mem" "$T/t.ext"
    done
    "$RIFFLE" --lockstep --seed=9 --memory=1K -T "$T/tmp" --split=2 \
        --output-pattern="$T/sp.%d" --output-pattern="$T/tp.%d" "$T/src" "$T/tgt"
    cmp "$T/t.mem" <(cat "$T/tp.0" "$T/tp.1")
    [ -z "$(ls -A "$T/tmp")" ]
}

@test "-z: NUL-terminated records in lockstep" {
    tr '\n' '\0' < "$T/src" > "$T/srcz"
    tr '\n' '\0' < "$T/tgt" > "$T/tgtz"
    "$RIFFLE" --lockstep -z --seed=4 "$T/srcz" "$T/tgtz" -o "$T/sz" -o "$T/tz"
    tr '\0' '\n' < "$T/sz" > "$T/sz.lines"
    tr '\0' '\n' < "$T/tz" > "$T/tz.lines"
    aligned "$T/sz.lines" "$T/tz.lines"
    cmp "$T/sz" <("$RIFFLE" -z --seed=4 "$T/srcz")
    # a NUL-record count that differs is refused as a line count is
    printf 'a\0b\0' > "$T/two"
    run "$RIFFLE" --lockstep -z --seed=4 "$T/srcz" "$T/two" -o "$T/sz" -o "$T/tz"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/two: 2 records, but $T/srcz has 20000: --lockstep needs the same number" ]
}

@test "-n K and --header: the first K of each file's order, headers in place" {
    "$RIFFLE" --lockstep --seed=5 -n 100 --header=1 "$T/src" "$T/tgt" -o "$T/s" -o "$T/t"
    cmp "$T/s" <("$RIFFLE" --seed=5 -n 100 --header=1 "$T/src")
    cmp "$T/t" <("$RIFFLE" --seed=5 -n 100 --header=1 "$T/tgt")
    [ "$(head -n 1 "$T/t")" = "$(head -n 1 "$T/tgt")" ]
    [ -z "$(paste -d'\t' "$T/s" "$T/t" | awk -F'\t' '{ split($1, a, " "); split($2, b, " ")
                                                       if (a[2] != b[2]) print NR }')" ]
}

@test "outputs may be the inputs: replaced together at the end" {
    cp "$T/src" "$T/s"
    cp "$T/tgt" "$T/t"
    "$RIFFLE" --lockstep --seed=2 "$T/s" "$T/t" -o "$T/s" -o "$T/t"
    aligned "$T/s" "$T/t"
    cmp "$T/s" <("$RIFFLE" --seed=2 "$T/src")
}

@test "usage errors: outputs per file, -e, -i, -r, --key, two names of one output" {
    run "$RIFFLE" --lockstep "$T/src" "$T/tgt" -o "$T/a"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: --lockstep needs one -o per file: 1 given for 2 files" ]
    [ "${lines[1]}" = "Try 'riffle --help' for more information." ]
    run "$RIFFLE" --lockstep --split=2 --output-pattern="$T/p%d" "$T/src" "$T/tgt"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: --lockstep --split needs one --output-pattern per file: 1 given for 2 files" ]
    run "$RIFFLE" --lockstep -e a b -o "$T/a" -o "$T/b"
    [ "${lines[0]}" = "riffle: cannot combine --lockstep and -e" ]
    run "$RIFFLE" --lockstep -i 1-5 -o "$T/a"
    [ "${lines[0]}" = "riffle: cannot combine --lockstep and -i" ]
    run "$RIFFLE" --lockstep -r "$T/src" -o "$T/a"
    [ "${lines[0]}" = "riffle: cannot combine --lockstep and -r" ]
    run "$RIFFLE" --lockstep --key=1 --split=2 --output-pattern="$T/p%d" "$T/src"
    [ "${lines[0]}" = "riffle: cannot combine --lockstep and --key" ]
    run "$RIFFLE" --lockstep "$T/src" "$T/tgt" -o "$T/a" -o "$T/./a"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: '$T/a' and '$T/./a' are the same file" ]
    run "$RIFFLE" "$T/src" -o "$T/a" -o "$T/b"   # without --lockstep, as shuf
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: multiple output files specified" ]
    [ ! -e "$T/a" ] && [ ! -e "$T/b" ]
}

@test "compressed files and outputs in lockstep: the order of the plain files" {
    gzip -c "$T/src" > "$T/src.gz"
    gzip -c "$T/tgt" > "$T/tgt.gz"
    "$RIFFLE" --lockstep --seed=6 "$T/src.gz" "$T/tgt.gz" -o "$T/s" -o "$T/t.gz"
    cmp "$T/s" <("$RIFFLE" --seed=6 "$T/src")
    cmp <(gzip -dc "$T/t.gz") <("$RIFFLE" --seed=6 "$T/tgt")
    # a corrupt one fails the run before any output is replaced
    head -c 20000 "$T/tgt.gz" > "$T/cut.gz"
    echo old > "$T/s"
    run "$RIFFLE" --lockstep --seed=6 "$T/src.gz" "$T/cut.gz" -o "$T/s" -o "$T/t2"
    [ "$status" -eq 1 ]
    [ "$(cat "$T/s")" = old ]
    [ ! -e "$T/t2" ]
}
