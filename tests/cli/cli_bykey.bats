#!/usr/bin/env bats
# Splits and samples by key, per group and by probability: --key with
# --split (no key in two parts, parts stable when rows are added, the full
# shuffle's order inside a part), sample --key (keys, not lines), sample
# --group -n K, sample --prob (nested in P), every error path, and what two
# line-aligned files shuffled with one seed give.

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
}

# N records "u<key>\t<n>\tpayload" over K keys, numbered from FIRST.
make_keyed() { # file n keys [first]
    awk -v n="$2" -v k="$3" -v f="${4:-1}" \
        'BEGIN { for (i = f; i < f + n; i++) printf "u%d\t%d\tp%d\n", (i * 7919) % k, i, i }' > "$1"
}

# Each key of the parts' files appears in one file only.
no_leak() { # part files...
    for f in "$@"; do cut -f1 "$f" | sort -u | sed "s|\$|	$f|"; done |
        cut -f1 | sort | uniq -d | { ! grep -q .; }
}

# key -> part file, one line each, sorted.
key_parts() { # part files...
    for f in "$@"; do cut -f1 "$f" | sort -u | sed "s|\$| $(basename "$f")|"; done | sort
}

@test "--key --split: every key's records in one part, every record once" {
    make_keyed "$T/in" 2000 97
    "$RIFFLE" --seed=4 --key=1 --split=70%,20%,10% \
        --output-pattern="$T/train,$T/valid,$T/test" "$T/in"
    no_leak "$T/train" "$T/valid" "$T/test"
    cat "$T/train" "$T/valid" "$T/test" | sort | cmp - <(sort "$T/in")
    # the parts hold their fractions of the 97 keys, roughly
    n=$(cut -f1 "$T/train" | sort -u | wc -l)
    [ "$n" -ge 50 ]
    [ "$n" -le 85 ]
    "$RIFFLE" --seed=4 --key=1 --split=4 --output-pattern="$T/q%d" "$T/in"
    no_leak "$T/q0" "$T/q1" "$T/q2" "$T/q3"
    cat "$T/q"? | sort | cmp - <(sort "$T/in")
    for i in 0 1 2 3; do [ -s "$T/q$i" ]; done
}

@test "--key --split: the same seed gives the same parts; another seed others" {
    make_keyed "$T/in" 500 40
    "$RIFFLE" --seed=x --key=1 --split=2 --output-pattern="$T/a%d" "$T/in"
    "$RIFFLE" --seed=x --key=1 --split=2 --output-pattern="$T/b%d" "$T/in"
    cmp "$T/a0" "$T/b0"
    cmp "$T/a1" "$T/b1"
    "$RIFFLE" --seed=y --key=1 --split=2 --output-pattern="$T/c%d" "$T/in"
    ! cmp -s "$T/a0" "$T/c0"
    # standard input and several files as one input give the same parts
    "$RIFFLE" --seed=x --key=1 --split=2 --output-pattern="$T/d%d" < "$T/in"
    cmp "$T/a0" "$T/d0"
    head -n 200 "$T/in" > "$T/h1"; tail -n +201 "$T/in" > "$T/h2"
    "$RIFFLE" --seed=x --key=1 --split=2 --output-pattern="$T/e%d" "$T/h1" "$T/h2"
    cmp "$T/a0" "$T/e0"
    cmp "$T/a1" "$T/e1"
}

@test "--key --split: appending rows never moves an existing key to another part" {
    make_keyed "$T/in" 600 50
    "$RIFFLE" --seed=11 --key=1 --split=60%,40% --output-pattern="$T/a0,$T/a1" "$T/in"
    key_parts "$T/a0" "$T/a1" | sed 's/ a/ /' > "$T/before"
    # new records of old keys and of new keys (u50 .. u79)
    cp "$T/in" "$T/more"
    make_keyed "$T/extra" 900 80 601
    cat "$T/extra" >> "$T/more"
    "$RIFFLE" --seed=11 --key=1 --split=60%,40% --output-pattern="$T/b0,$T/b1" "$T/more"
    no_leak "$T/b0" "$T/b1"
    key_parts "$T/b0" "$T/b1" | sed 's/ b/ /' > "$T/after"
    [ "$(wc -l < "$T/before")" -eq 50 ]
    [ "$(wc -l < "$T/after")" -eq 80 ]
    # every key of before has the same part after
    [ -z "$(comm -23 "$T/before" "$T/after")" ]
}

@test "--key --split: inside a part, the order of the full shuffle; --header in each part" {
    make_keyed "$T/in" 300 30
    "$RIFFLE" --seed=5 "$T/in" > "$T/full"
    "$RIFFLE" --seed=5 --key=1 --split=3 --output-pattern="$T/p%d" "$T/in"
    for i in 0 1 2; do
        grep -Fxf "$T/p$i" "$T/full" | cmp - "$T/p$i"
    done
    { printf 'user\tn\tpayload\n'; cat "$T/in"; } > "$T/hdr"
    "$RIFFLE" --seed=5 --header=1 --key=1 --split=3 --output-pattern="$T/h%d" "$T/hdr"
    for i in 0 1 2; do
        [ "$(head -n 1 "$T/h$i")" = "$(printf 'user\tn\tpayload')" ]
        tail -n +2 "$T/h$i" | cmp - "$T/p$i"
    done
}

@test "--key with -d: fields split by another byte; an empty field is a key" {
    printf 'a,1\nb,2\n,3\na,4\n,5\nb,6\n' > "$T/in"
    "$RIFFLE" --seed=2 --key=1 -d , --split=50%,50% --output-pattern="$T/x,$T/y" "$T/in"
    cat "$T/x" "$T/y" | sort | cmp - <(sort "$T/in")
    for k in a b ''; do
        nx=$(grep -c "^$k," "$T/x" || true); ny=$(grep -c "^$k," "$T/y" || true)
        [ "$nx" -eq 0 ] || [ "$ny" -eq 0 ]
    done
    "$RIFFLE" --seed=2 --key=1 --field-delimiter=, --split=50%,50% \
        --output-pattern="$T/x2,$T/y2" "$T/in"
    cmp "$T/x" "$T/x2"
}

@test "--key errors: missing field (file and line), no split, counts, -n, -i, bad field; no part left" {
    printf 'a\t1\nb\t2\n' > "$T/one"
    printf 'c\t3\nd\n' > "$T/two"
    run "$RIFFLE" --seed=1 --key=2 --split=2 --output-pattern="$T/p%d" "$T/one" "$T/two"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/two:2: missing key field 2" ]
    [ ! -e "$T/p0" ]
    [ ! -e "$T/p1" ]
    run "$RIFFLE" --key=1 "$T/one"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: --key needs --split" ]
    run "$RIFFLE" --key=1 --split=1,* --output-pattern="$T/p%d" "$T/one"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: --key needs --split as N parts or percentages, not counts" ]
    run "$RIFFLE" --key=1 -n 1 --split=2 --output-pattern="$T/p%d" "$T/one"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: cannot combine --key and -n" ]
    run "$RIFFLE" --key=1 -i 1-5 --split=2 --output-pattern="$T/p%d"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: cannot combine --key and -i" ]
    run "$RIFFLE" -d , "$T/one"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: --field-delimiter needs --key" ]
    run "$RIFFLE" --key=0 --split=2 --output-pattern="$T/p%d" "$T/one"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: invalid key field '0'" ]
    run "$RIFFLE" --key=1 -d ab --split=2 --output-pattern="$T/p%d" "$T/one"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: the delimiter must be a single character" ]
    [ ! -e "$T/p0" ]
    [ ! -e "$T/p1" ]
    # the records are held: beyond --memory, an error (mapped or piped)
    make_keyed "$T/big" 20000 10
    run "$RIFFLE" --key=1 --memory=64K --split=2 --output-pattern="$T/p%d" "$T/big"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/big: too large for --key within the memory budget of 65536 bytes (see --memory)" ]
    run sh -c 'cat "$1" | "$2" --key=1 --memory=64K --split=2 --output-pattern="$3/p%d"' \
        sh "$T/big" "$RIFFLE" "$T"
    [ "$status" -eq 1 ]
    [[ "$output" == *"-: too large for --key"* ]]
    [ ! -e "$T/p0" ]
    [ ! -e "$T/p1" ]
    # shuf knows nothing of --key or -d
    run "${BUILD:-build}/shuf" --key=1 "$T/one"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "shuf: unrecognized option '--key=1'" ]
    run "${BUILD:-build}/shuf" -d , "$T/one"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "shuf: invalid option -- 'd'" ]
}

@test "sample --prob: a larger P keeps a superset; P = 0 and 1; stdin as a file" {
    seq 5000 > "$T/in"
    for seed in 1 2 3; do
        prev=/dev/null
        for p in 0 0.001 0.01 0.05 0.2 0.25 0.5 0.51 0.9 1; do
            "$RIFFLE" sample --seed=$seed --prob=$p "$T/in" > "$T/s$p"
            # input order, and every line of the smaller P is kept again
            sort -n "$T/s$p" | cmp - "$T/s$p"
            [ -z "$(comm -23 <(sort "$prev") <(sort "$T/s$p"))" ]
            prev="$T/s$p"
        done
        [ ! -s "$T/s0" ]
        cmp "$T/s1" "$T/in"
        "$RIFFLE" sample --seed=$seed --prob=0.2 < "$T/in" | cmp - "$T/s0.2"
    done
}

@test "sample --prob: about P of the lines (fixed seed, 5 standard deviations); files as one input" {
    seq 20000 > "$T/in"
    n=$("$RIFFLE" sample --seed=8 --prob=0.1 "$T/in" | wc -l)
    # 2000 +- 5 * sqrt(20000 * 0.1 * 0.9) = 2000 +- 212
    [ "$n" -ge 1788 ]
    [ "$n" -le 2212 ]
    head -n 7000 "$T/in" > "$T/a"; tail -n +7001 "$T/in" > "$T/b"
    "$RIFFLE" sample --seed=8 --prob=0.1 "$T/a" "$T/b" |
        cmp - <("$RIFFLE" sample --seed=8 --prob=0.1 "$T/in")
}

@test "sample --prob errors: outside [0, 1], not a number, with -n; nothing printed" {
    for p in -0.1 1.5 abc nan inf '' 0.5x ' 0.5'; do
        run "$RIFFLE" sample --prob="$p" /dev/null
        [ "$status" -eq 1 ]
        [ "${lines[0]}" = "riffle: invalid probability '$p': it must be a number from 0 to 1" ]
        [ "${lines[1]}" = "Try 'riffle sample --help' for more information." ]
    done
    run "$RIFFLE" sample --prob=0.5 -n 3 /dev/null
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: cannot combine -n and --prob" ]
    run "$RIFFLE" sample --prob=0.5 -w 1 /dev/null
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: cannot combine --weights with --prob" ]
}

@test "sample --key --prob: a key's lines all kept or all dropped; nested in P" {
    make_keyed "$T/in" 3000 200
    prev=/dev/null
    for p in 0.05 0.2 0.5 0.8; do
        "$RIFFLE" sample --seed=3 --key=1 --prob=$p "$T/in" > "$T/s$p"
        # every line of a kept key is there, in input order
        cut -f1 "$T/s$p" | sort -u > "$T/keys$p"
        awk -F'\t' 'NR == FNR { k[$1] = 1; next } $1 in k' "$T/keys$p" "$T/in" | cmp - "$T/s$p"
        [ -z "$(comm -23 "$prev" "$T/keys$p")" ]
        prev="$T/keys$p"
    done
    n=$(wc -l < "$T/keys0.5")
    [ "$n" -ge 65 ]
    [ "$n" -le 135 ]   # 100 +- 5 sd of 200 keys
}

@test "sample --key -n K: the lines of K keys, nested in K, the same for a longer input" {
    make_keyed "$T/in" 3000 200
    prev=/dev/null
    for k in 1 5 20 199 200 500; do
        "$RIFFLE" sample --seed=6 --key=1 -n $k "$T/in" > "$T/s$k"
        cut -f1 "$T/s$k" | sort -u > "$T/keys$k"
        want=$k; [ $k -gt 200 ] && want=200
        [ "$(wc -l < "$T/keys$k")" -eq $want ]
        awk -F'\t' 'NR == FNR { k[$1] = 1; next } $1 in k' "$T/keys$k" "$T/in" | cmp - "$T/s$k"
        [ -z "$(comm -23 "$prev" "$T/keys$k")" ]
        prev="$T/keys$k"
    done
    # the same keys from a pipe; and more rows of the input's keys leave the
    # choice as it was (a key's value is its own, not its rows')
    "$RIFFLE" sample --seed=6 --key=1 -n 20 < "$T/in" | cmp - "$T/s20"
    make_keyed "$T/extra" 1000 200 3001
    cat "$T/in" "$T/extra" > "$T/more"
    "$RIFFLE" sample --seed=6 --key=1 -n 20 "$T/more" | cut -f1 | sort -u | cmp - "$T/keys20"
    run "$RIFFLE" sample --seed=6 --key=1 -n 0 "$T/in"
    [ "$status" -eq 0 ]
    [ -z "$output" ]
}

@test "sample --group -n K: K lines per group (all of a smaller one), input order, seeded" {
    make_keyed "$T/in" 2000 30
    printf 'rare\t2001\tonly\n' >> "$T/in"
    "$RIFFLE" sample --seed=9 --group=1 -n 4 "$T/in" > "$T/s"
    cut -f1 "$T/s" | sort | uniq -c | awk '$2 != "rare" && $1 != 4 { bad = 1 } END { exit bad }'
    [ "$(grep -c '^rare' "$T/s")" -eq 1 ]
    [ "$(cut -f1 "$T/s" | sort -u | wc -l)" -eq 31 ]
    # lines of the input, in input order
    sort -t"$(printf '\t')" -k2,2n "$T/s" | cmp - "$T/s"
    [ -z "$(comm -23 <(sort "$T/s") <(sort "$T/in"))" ]
    "$RIFFLE" sample --seed=9 --group=1 -n 4 < "$T/in" | cmp - "$T/s"
    "$RIFFLE" sample --seed=10 --group=1 -n 4 "$T/in" | { ! cmp -s - "$T/s"; }
    # a group's choice does not depend on the other groups' lines
    grep '^u3	' "$T/in" > "$T/u3"
    "$RIFFLE" sample --seed=9 --group=1 -n 4 "$T/u3" | cmp - <(grep '^u3	' "$T/s")
}

@test "sample --group and --key errors: no -n, both, missing field, bad field; nothing printed" {
    printf 'a\t1\nb\t2\nc\n' > "$T/in"
    run "$RIFFLE" sample --group=1 "$T/in"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: --group needs -n K" ]
    run "$RIFFLE" sample --group=1 --key=1 -n 1 "$T/in"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: cannot combine --key and --group" ]
    run "$RIFFLE" sample --group=1 --prob=0.5 -n 1 "$T/in"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: cannot combine -n and --prob" ]
    run "$RIFFLE" sample --key=1 -w 2 -n 1 "$T/in"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: cannot combine --weights with --key" ]
    for opt in "--group=2 -n 5" "--key=2 -n 5" "--key=2 --prob=1"; do
        run "$RIFFLE" sample --seed=1 $opt "$T/in"
        [ "$status" -eq 1 ]
        [ "$output" = "riffle: $T/in:3: missing key field 2" ]
    done
    run "$RIFFLE" sample --group=x -n 1 "$T/in"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: invalid group field 'x'" ]
    run "$RIFFLE" sample --key=1 -d ab -n 1 "$T/in"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: the delimiter must be a single character" ]
    run "$RIFFLE" sample --key=1 --key=2 -n 1 "$T/in"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: multiple key fields specified" ]
}

@test "two line-aligned files shuffled with one seed keep their lines aligned" {
    seq 1000 | sed 's/^/source /' > "$T/src"
    seq 1000 | sed 's/^/target /' > "$T/tgt"
    "$RIFFLE" --seed=21 "$T/src" > "$T/src.out"
    "$RIFFLE" --seed=21 "$T/tgt" > "$T/tgt.out"
    sed 's/^source //' "$T/src.out" | cmp - <(sed 's/^target //' "$T/tgt.out")
    ! cmp -s <(seq 1000) <(sed 's/^source //' "$T/src.out")
    # whatever the engine: the external one (a small budget) gives that order too
    "$RIFFLE" --seed=21 --memory=4K -T "$T" "$T/tgt" | cmp - "$T/tgt.out"
    # with -n K too: the same positions
    "$RIFFLE" --seed=21 -n 10 "$T/src" | sed 's/^source //' |
        cmp - <("$RIFFLE" --seed=21 -n 10 "$T/tgt" | sed 's/^target //')
}

@test "-z: NUL-terminated records by key, per group and by probability" {
    printf 'a\t1\0b\t2\0a\t3\0c\t4\0' > "$T/z"
    "$RIFFLE" -z --seed=1 --key=1 --split=2 --output-pattern="$T/z%d" "$T/z"
    cat "$T/z0" "$T/z1" | tr '\0' '\n' | sort | cmp - <(printf 'a\t1\na\t3\nb\t2\nc\t4\n')
    for f in "$T/z0" "$T/z1"; do
        n=$(tr '\0' '\n' < "$f" | grep -c '^a' || true)
        [ "$n" -eq 0 ] || [ "$n" -eq 2 ]
    done
    "$RIFFLE" sample -z --seed=1 --prob=1 "$T/z" | cmp - "$T/z"
    "$RIFFLE" sample -z --seed=1 --group=1 -n 5 "$T/z" | cmp - "$T/z"
    "$RIFFLE" sample -z --seed=1 --key=1 -n 3 "$T/z" | cmp - "$T/z"
}

@test "golden: seeded --key splits, --prob, --key and --group samples are pinned" {
    seq 30 | awk '{ printf "%d\tu%d\n", $1, $1 % 7 }' > "$T/k"
    "$RIFFLE" --seed=42 --key=2 --split=3 --output-pattern="$T/part%d" "$T/k"
    [ "$(cut -f1 "$T/part0" | tr '\n' ' ')" = "10 17 3 24 " ]
    [ "$(cut -f1 "$T/part1" | tr '\n' ' ')" = "18 20 27 13 4 6 25 11 " ]
    [ "$(cut -f1 "$T/part2" | tr '\n' ' ')" = "12 15 28 26 22 30 21 29 16 1 19 7 5 8 9 14 2 23 " ]
    [ "$(seq 100 | "$RIFFLE" sample --prob=0.1 --seed=42 | tr '\n' ' ')" = \
      "20 22 23 28 29 30 39 76 84 95 " ]
    [ "$("$RIFFLE" sample --key=2 -n 2 --seed=42 "$T/k" | cut -f1 | tr '\n' ' ')" = \
      "3 6 10 13 17 20 24 27 " ]
    [ "$("$RIFFLE" sample --key=2 --prob=0.5 --seed=42 "$T/k" | cut -f1 | tr '\n' ' ')" = \
      "3 6 10 13 17 20 24 27 " ]
    [ "$("$RIFFLE" sample --group=2 -n 1 --seed=42 "$T/k" | cut -f1 | tr '\n' ' ')" = \
      "3 11 12 13 21 23 29 " ]
}
