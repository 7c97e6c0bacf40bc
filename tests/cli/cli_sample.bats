#!/usr/bin/env bats
# riffle sample: K of the input lines without replacement, in one pass --
# exact counts, subsets with multiplicity, input order with --keep-order,
# seeded reproducibility from files and pipes, weights (zero never chosen,
# errors with their line), NUL records, and every error path.

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
}

flat() { tr '\n' ' ' | sed 's/ $//'; }

# Lines with repeats: "a" x 5, "b" x 3, 1..30 once, and one empty line.
make_dups() {
    { for i in 1 2 3 4 5; do echo a; done; for i in 1 2 3; do echo b; done
      seq 30; echo; } > "$T/dups"
}

# out is a sub-multiset of in: comm on sorted files respects repeats.
submultiset() { [ -z "$(comm -23 <(sort "$1") <(sort "$2"))" ]; }

@test "--help describes the command and exits 0" {
    run "$RIFFLE" sample --help
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "Usage: riffle sample -n K [OPTION]... [FILE]..." ]]
    [[ "$output" == *"--weights=FIELD"* && "$output" == *"--keep-order"* ]]
}

@test "exactly K lines, a sub-multiset of the input, from a file and a pipe" {
    make_dups
    for k in 1 5 8 20 39; do
        for seed in 1 2 3; do
            "$RIFFLE" sample -n $k --seed=$seed "$T/dups" > "$T/out"
            [ "$(wc -l < "$T/out")" -eq $k ]
            submultiset "$T/out" "$T/dups"
            "$RIFFLE" sample -n $k --seed=$seed < "$T/dups" | cmp - "$T/out"
            "$RIFFLE" sample -n $k --seed=$seed - < "$T/dups" | cmp - "$T/out"
        done
    done
}

@test "K at least the input size: every line, each as often as in the input" {
    make_dups
    for k in 39 40 1000 18446744073709551615 99999999999999999999999; do
        "$RIFFLE" sample -n $k --seed=4 "$T/dups" | sort > "$T/out"
        sort "$T/dups" | cmp - "$T/out"
    done
}

@test "random order by default; --keep-order gives the same lines in input order" {
    seq 100 > "$T/in"
    for seed in 1 2 3 42; do
        a=$("$RIFFLE" sample -n 10 --seed=$seed "$T/in")
        b=$("$RIFFLE" sample -n 10 --seed=$seed --keep-order "$T/in")
        [ "$(echo "$a" | sort -n | flat)" = "$(echo "$b" | flat)" ]
        [ "$("$RIFFLE" sample -n 10 --seed=$seed --sorted "$T/in")" = "$b" ]
        [ "$("$RIFFLE" sample -n 10 --seed=$seed -k "$T/in")" = "$b" ]
    done
    # over a few seeds the default order is not always the input order
    unsorted=0
    for seed in 1 2 3 4 5; do
        a=$("$RIFFLE" sample -n 10 --seed=$seed "$T/in")
        [ "$a" = "$(echo "$a" | sort -n)" ] || unsorted=1
    done
    [ $unsorted -eq 1 ]
}

@test "golden: seeded samples are pinned" {
    [ "$(seq 100 | "$RIFFLE" sample -n 10 --seed=42 | flat)" = "22 64 53 40 36 91 35 81 92 21" ]
    [ "$(seq 100 | "$RIFFLE" sample -n 5 --seed=42 --rng=pcg64 | flat)" = "76 98 84 15 10" ]
    [ "$(seq 100 | awk '{print $1, $1 % 7}' | "$RIFFLE" sample -n 5 -w 2 --seed=42 | tr '\n' '|')" = \
      "3 3|20 6|97 6|48 6|93 2|" ]
}

@test "seeded: reproducible, another seed another sample; several files are one input" {
    seq 1000 > "$T/in"
    a=$("$RIFFLE" sample -n 20 --seed=s "$T/in")
    [ "$a" = "$("$RIFFLE" sample -n 20 --seed=s "$T/in")" ]
    [ "$a" != "$("$RIFFLE" sample -n 20 --seed=t "$T/in")" ]
    head -300 "$T/in" > "$T/a"
    tail -n +301 "$T/in" > "$T/b"
    [ "$a" = "$("$RIFFLE" sample -n 20 --seed=s "$T/a" "$T/b")" ]
    [ "$a" = "$("$RIFFLE" sample -n 20 --seed=s "$T/a" - < "$T/b")" ]
    # --random-source keys the generator from a file
    head -c 32 /dev/zero > "$T/key"
    c=$("$RIFFLE" sample -n 20 --random-source="$T/key" "$T/in")
    [ "$c" = "$("$RIFFLE" sample -n 20 --random-source="$T/key" "$T/in")" ]
}

@test "each line equally likely: 300 seeds, one of three lines" {
    # A gross-bias check with fixed seeds (deterministic): expected 100 each.
    printf 'x\ny\nz\n' > "$T/in"
    for seed in $(seq 300); do "$RIFFLE" sample -n 1 --seed=$seed "$T/in"; done |
        sort | uniq -c > "$T/counts"
    [ "$(wc -l < "$T/counts")" -eq 3 ]
    while read -r c _; do [ "$c" -gt 70 ] && [ "$c" -lt 130 ]; done < "$T/counts"
}

@test "-n 0 prints nothing and reads nothing" {
    run "$RIFFLE" sample -n 0 /nonexistent
    [ "$status" -eq 0 ]
    [ -z "$output" ]
}

@test "empty input: nothing, success" {
    run "$RIFFLE" sample -n 3 < /dev/null
    [ "$status" -eq 0 ]
    [ -z "$output" ]
}

@test "-z: NUL-terminated records, newlines inside them kept" {
    printf 'a\nb\0c\0d d\0' > "$T/in"
    "$RIFFLE" sample -z -n 10 --seed=1 "$T/in" | tr '\0' '|' | tr '\n' '~' > "$T/out"
    [ "$(tr '|' '\n' < "$T/out" | sort | flat)" = "a~b c d d" ]
    [ "$("$RIFFLE" sample -z -n 2 --seed=1 "$T/in" | tr -cd '\0' | wc -c)" -eq 2 ]
    # an unterminated last record still gets its delimiter
    printf 'x\0y' | "$RIFFLE" sample -z -n 5 --seed=1 -k | cmp - <(printf 'x\0y\0')
}

@test "weights: zero weights are never chosen; K beyond the positive ones gives those" {
    printf 'zero1 0\none 1\nzero2 0.0\ntwo 2\nzero3 0e5\nthree 3\n' > "$T/w"
    for seed in $(seq 40); do
        "$RIFFLE" sample -n 2 -w 2 --seed=$seed "$T/w"
    done > "$T/out"
    ! grep -q zero "$T/out"
    [ "$(wc -l < "$T/out")" -eq 80 ]
    [ "$("$RIFFLE" sample -n 10 --weights=2 --seed=1 "$T/w" | sort | flat)" = "one 1 three 3 two 2" ]
    [ "$("$RIFFLE" sample -n 10 --weights=2 --seed=1 -k "$T/w" | flat)" = "one 1 two 2 three 3" ]
    # all weights zero: nothing
    run "$RIFFLE" sample -n 2 -w 1 <<< $'0\n0'
    [ "$status" -eq 0 ]
    [ -z "$output" ]
}

@test "weights: heavy lines are chosen more often (fixed seeds)" {
    printf 'light 1\nheavy 9\n' > "$T/w"
    heavy=$(for seed in $(seq 200); do "$RIFFLE" sample -n 1 -w 2 --seed=$seed "$T/w"; done |
            grep -c heavy)
    # expected 180 of 200
    [ "$heavy" -gt 160 ] && [ "$heavy" -lt 195 ]
}

@test "weights: fields by blanks or by --delimiter; output lines unchanged" {
    printf 'a\t  5  x\nb 0 y\n' > "$T/w"
    [ "$("$RIFFLE" sample -n 5 -w 2 --seed=1 "$T/w")" = "$(printf 'a\t  5  x')" ]
    printf 'a,0,q\nb,,q\nc, 2.5 ,q\n' > "$T/c"
    run "$RIFFLE" sample -n 5 -w 2 -d , --seed=1 "$T/c"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/c:2:3: invalid weight ''" ]
    sed -i '2d' "$T/c"
    [ "$("$RIFFLE" sample -n 5 -w 2 -d , --seed=1 "$T/c")" = "c, 2.5 ,q" ]
    [ "$("$RIFFLE" sample -n 5 -w 3 -d , --seed=1 <<< 'x,y,1')" = "x,y,1" ]
}

@test "weights: invalid weights are errors with file, line and column" {
    printf 'a 1\nb 2\nc -1\n' > "$T/w"
    run "$RIFFLE" sample -n 1 -w 2 "$T/w"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/w:3:3: invalid weight '-1'" ]
    for bad in nan NaN inf -inf 1e999 x 1x 0x; do
        run bash -c "printf 'a 1\nb %s\n' '$bad' | '$RIFFLE' sample -n 5 -w 2"
        [ "$status" -eq 1 ]
        [ "$output" = "riffle: -:2:3: invalid weight '$bad'" ]
    done
    # the column is where the weight field starts, blanks or a delimiter before it
    run bash -c "printf 'a 1\n  bb \t  -2 z\n' | '$RIFFLE' sample -n 5 -w 2"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: -:2:9: invalid weight '-2'" ]
    run bash -c "printf 'a,b,1\nccc,dd,x\n' | '$RIFFLE' sample -n 5 -w 3 -d ,"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: -:2:8: invalid weight 'x'" ]
    run bash -c "printf 'a 1\nb\n' | '$RIFFLE' sample -n 5 -w 2"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: -:2:2: missing weight field 2" ]
    # (the column just past the end of the record)
    run bash -c "printf 'a,1,2\nbcd,1\n' | '$RIFFLE' sample -n 5 -w 3 -d ,"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: -:2:6: missing weight field 3" ]
    # line numbers count per file
    printf 'a 1\nb 1\n' > "$T/ok"
    printf 'c 1\nd ?\n' > "$T/bad"
    run "$RIFFLE" sample -n 5 -w 2 "$T/ok" "$T/bad"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/bad:2:3: invalid weight '?'" ]
}

@test "usage errors" {
    run "$RIFFLE" sample "$T/x"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: missing the sample size -n K" ]
    [ "${lines[1]}" = "Try 'riffle sample --help' for more information." ]
    run "$RIFFLE" sample -n x
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: invalid sample size 'x'" ]
    [ "${lines[1]}" = "Try 'riffle sample --help' for more information." ]
    run "$RIFFLE" sample -n -1
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: invalid sample size '-1'" ]
    run "$RIFFLE" sample -n 1 -w 0
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: invalid field number '0'" ]
    run "$RIFFLE" sample -n 1 --weights=a
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: invalid field number 'a'" ]
    run "$RIFFLE" sample -n 1 -d ,
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: --delimiter needs --weights" ]
    run "$RIFFLE" sample -n 1 -w 1 -d ab
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: the delimiter must be a single character" ]
    run "$RIFFLE" sample -n 1 --rng=foo
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: invalid generator 'foo' (chacha20, xoshiro256++ or pcg64)" ]
    run "$RIFFLE" sample -n 1 --seed=1 --random-source=/dev/zero
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: --seed and --random-source cannot be combined" ]
    run "$RIFFLE" sample -n 1 --bogus
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle sample: unrecognized option '--bogus'" ]
    [ "${lines[1]}" = "Try 'riffle sample --help' for more information." ]
}

@test "input errors: missing file, directory, short random source" {
    run "$RIFFLE" sample -n 1 "$T/missing"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/missing: No such file or directory" ]
    run "$RIFFLE" sample -n 1 "$T"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T: Is a directory" ]
    printf 'abc' > "$T/short"
    run "$RIFFLE" sample -n 1 --random-source="$T/short" /dev/null
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: '$T/short': end of file" ]
}

@test "write errors are reported" {
    [ -w /dev/full ] || skip "no /dev/full"
    run bash -c "seq 10 | '$RIFFLE' sample -n 3 > /dev/full"
    [ "$status" -eq 1 ]
    [[ "$output" == "riffle: write error: "* ]]
}
