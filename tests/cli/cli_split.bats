#!/usr/bin/env bats
# --split=SPEC with --output-pattern=PATTERN: the shuffled output cut into
# consecutive parts, each its own file, written atomically (all or none).
# Part sizes are checked against the documented rules (output.h, riffle.1),
# computed here independently with awk; contents as multisets, and with a
# seed against the unsplit output.

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
}

# line counts of the files, space-separated
sizes() {
    local f out=""
    for f in "$@"; do out="$out$(wc -l < "$f") "; done
    printf '%s\n' "${out% }"
}

# expected sizes of N equal parts of n records: the larger ones first
equal_sizes() { # n N
    awk -v n="$1" -v N="$2" 'BEGIN { q = int(n / N); r = n % N
        for (i = 0; i < N; i++) printf "%s%d", (i ? " " : ""), q + (i < r); print "" }'
}

# expected sizes for percentages given in tenths of a percent:
# b(i) = round(n * cum / 100), halves up
percent_sizes() { # n tenths...
    local n=$1; shift
    awk -v n="$n" -v list="$*" 'BEGIN { k = split(list, p, " "); cum = 0; prev = 0
        for (i = 1; i <= k; i++) { cum += p[i]; b = int((2 * n * cum + 1000) / 2000)
            printf "%s%d", (i > 1 ? " " : ""), b - prev; prev = b }
        print "" }'
}

# names part0 .. part(N-1) under $T
parts() { # N [prefix]
    local i
    for ((i = 0; i < $1; i++)); do printf '%s\n' "$T/${2:-part}$i"; done
}

# nothing but the files named may be in $T (no temporaries, no stray parts)
only_files() { # expected names, sorted
    [ "$(ls -A "$T" | sort | tr '\n' ' ')" = "$* " ]
}

@test "--split=N: N equal parts, the larger ones first, for many n (n < N included)" {
    for N in 1 3 4 16; do
        for n in 0 1 2 3 5 7 16 17 100; do
            rm -f "$T"/part*
            seq "$n" > "$T/in"
            "$RIFFLE" --split="$N" --output-pattern="$T/part%d" "$T/in"
            mapfile -t files < <(parts "$N")
            [ "$(sizes "${files[@]}")" = "$(equal_sizes "$n" "$N")" ]
            cmp <(sort "$T/in") <(cat "${files[@]}" | sort)
            [ ! -e "$T/part$N" ]
        done
    done
}

@test "--split=P%,...: cumulative rounding, sizes add up to n exactly" {
    for spec in "80%,10%,10%:800 100 100" "50%,50%:500 500" "100%:1000" \
                "33.3%,33.3%,33.4%:333 333 334" "0%,12.5%,87.5%:0 125 875" \
                "10%,10%,10%,10%,10%,10%,10%,10%,10%,10%:100 100 100 100 100 100 100 100 100 100"; do
        s=${spec%%:*}; tenths=${spec#*:}
        k=$(wc -w <<< "$tenths")
        for n in 0 1 2 3 7 9 10 99 1001; do
            rm -f "$T"/part*
            seq "$n" > "$T/in"
            "$RIFFLE" --split="$s" --output-pattern="$T/part%d" "$T/in"
            mapfile -t files < <(parts "$k")
            [ "$(sizes "${files[@]}")" = "$(percent_sizes "$n" $tenths)" ]
            cmp <(sort "$T/in") <(cat "${files[@]}" | sort)
        done
    done
}

@test "percentages: 9 decimals at most, each a number, summing to exactly 100" {
    seq 10 > "$T/in"
    "$RIFFLE" --split=33.333333333%,66.666666667% --output-pattern="$T/a,$T/b" "$T/in"
    [ "$(sizes "$T/a" "$T/b")" = "3 7" ]
    run "$RIFFLE" --split=80%,10% --output-pattern="$T/a,$T/b" "$T/in"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: invalid split '80%,10%': the percentages add up to 90%, not 100%" ]
    [ "${lines[1]}" = "Try 'riffle --help' for more information." ]
    run "$RIFFLE" --split=33.3%,33.3%,33.3% --output-pattern="$T/p%d" "$T/in"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: invalid split '33.3%,33.3%,33.3%': the percentages add up to 99.9%, not 100%" ]
    for bad in 50%,50 1.%,99% .5%,99.5% 0.1234567891%,99.8765432109% 101%,-1% 50%%,50% x%,100% 50%,,50%; do
        run "$RIFFLE" --split="$bad" --output-pattern="$T/p%d" "$T/in"
        [ "$status" -eq 1 ]
        [ "${lines[0]}" = "riffle: invalid split '$bad'" ] || [[ "${lines[0]}" == "riffle: invalid split '$bad': "* ]]
    done
    [ "$(ls "$T")" = "$(printf 'a\nb\nin')" ]
}

@test "--split=C1,C2,...: counts, '*' for the rest, else they must add up to n" {
    seq 10 > "$T/in"
    "$RIFFLE" --split=3,4,3 --output-pattern="$T/p%d" "$T/in"
    [ "$(sizes "$T/p0" "$T/p1" "$T/p2")" = "3 4 3" ]
    "$RIFFLE" --split=2,0,5,* --output-pattern="$T/q%d" "$T/in"
    [ "$(sizes "$T/q0" "$T/q1" "$T/q2" "$T/q3")" = "2 0 5 3" ]
    "$RIFFLE" --split=10,* --output-pattern="$T/r%d" "$T/in"
    [ "$(sizes "$T/r0" "$T/r1")" = "10 0" ]
    "$RIFFLE" --split='*' --output-pattern="$T/all" "$T/in"
    cmp <(sort "$T/in") <(sort "$T/all")
    rm -f "$T"/[pqr]? "$T/all"
    run "$RIFFLE" --split=3,4 --output-pattern="$T/p%d" "$T/in"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: the --split counts add up to 7, but 10 records are output" ]
    run "$RIFFLE" --split=3,4,5 --output-pattern="$T/p%d" "$T/in"
    [ "$output" = "riffle: the --split counts add up to 12, but 10 records are output" ]
    run "$RIFFLE" --split=8,4,* --output-pattern="$T/p%d" "$T/in"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: the --split counts add up to 12, more than the 10 records output" ]
    # the count is of the records output: after --header, and after -n
    "$RIFFLE" --split=2,2 -n 4 --output-pattern="$T/p%d" "$T/in"
    [ "$(sizes "$T/p0" "$T/p1")" = "2 2" ]
    "$RIFFLE" --header=1 --split=4,5 --output-pattern="$T/h%d" "$T/in"
    [ "$(sizes "$T/h0" "$T/h1")" = "5 6" ]
    for bad in '*,3' 3,-1 3,x '3,*,*' 1.5,* '' , 3,; do
        run "$RIFFLE" --split="$bad" --output-pattern="$T/p%d" "$T/in"
        [ "$status" -eq 1 ]
        [ "${lines[0]}" = "riffle: invalid split '$bad'" ]
    done
    run "$RIFFLE" --split=18446744073709551615,1,* --output-pattern="$T/p%d" "$T/in"
    [ "${lines[0]}" = "riffle: invalid split '18446744073709551615,1,*': the counts add up to more than 2^64-1" ]
}

@test "--split=N: 0, junk and too many parts are usage errors" {
    seq 5 > "$T/in"
    run "$RIFFLE" --split=0 --output-pattern="$T/p%d" "$T/in"
    [ "$status" -eq 1 ] && [ "${lines[0]}" = "riffle: invalid split '0': no parts" ]
    [ "${lines[1]}" = "Try 'riffle --help' for more information." ]
    run "$RIFFLE" --split=4097 --output-pattern="$T/p%d" "$T/in"
    [ "$status" -eq 1 ] && [ "${lines[0]}" = "riffle: invalid split '4097': more than 4096 parts" ]
    run "$RIFFLE" --split=2x --output-pattern="$T/p%d" "$T/in"
    [ "$status" -eq 1 ] && [ "${lines[0]}" = "riffle: invalid split '2x'" ]
    [ "$(ls "$T")" = in ]
}

@test "--header=K: every part starts with the header; empty parts hold only it" {
    { echo 'id,name'; seq 7 | sed 's/.*/&,x&/'; } > "$T/in.csv"
    "$RIFFLE" --header=1 --split=10 --output-pattern="$T/p%d.csv" "$T/in.csv"
    for i in $(seq 0 9); do
        [ "$(head -n 1 "$T/p$i.csv")" = "id,name" ]
    done
    [ "$(sizes "$T"/p{0..9}.csv)" = "2 2 2 2 2 2 2 1 1 1" ]
    cmp <(tail -n +2 "$T/in.csv" | sort) <(for i in $(seq 0 9); do tail -n +2 "$T/p$i.csv"; done | sort)
    # a header longer than the input; and -n 0 with a header
    "$RIFFLE" --header=20 --split=2 --output-pattern="$T/h%d" "$T/in.csv"
    cmp "$T/in.csv" "$T/h0" && cmp "$T/in.csv" "$T/h1"
    "$RIFFLE" --header=1 -n 0 --split=2 --output-pattern="$T/z%d" "$T/in.csv"
    [ "$(cat "$T/z0")" = id,name ] && [ "$(cat "$T/z1")" = id,name ]
    # an unterminated last line that is all header gets its newline in each part
    printf 'only' > "$T/one"
    "$RIFFLE" --header=1 --split=2 --output-pattern="$T/u%d" "$T/one"
    [ "$(od -c < "$T/u1")" = "$(printf 'only\n' | od -c)" ]
}

@test "-n 0 and empty input: every part is created, empty" {
    seq 5 > "$T/in"
    "$RIFFLE" -n 0 --split=3 --output-pattern="$T/p%d" "$T/in"
    [ -f "$T/p0" ] && [ -f "$T/p2" ] && [ ! -s "$T/p0" ] && [ ! -s "$T/p1" ] && [ ! -s "$T/p2" ]
    : > "$T/empty"
    "$RIFFLE" --split=50%,50% --output-pattern="$T/e%d" "$T/empty"
    [ -f "$T/e0" ] && [ ! -s "$T/e0" ] && [ ! -s "$T/e1" ]
}

@test "patterns: %d numbered from 0, widths, %% and lists of names" {
    seq 4 > "$T/in"
    "$RIFFLE" --split=2 --output-pattern="$T/a-%03d.txt" "$T/in"
    [ -f "$T/a-000.txt" ] && [ -f "$T/a-001.txt" ]
    "$RIFFLE" --split=2 --output-pattern="$T/b%%%d%%" "$T/in"
    [ -f "$T/b%0%" ] && [ -f "$T/b%1%" ]
    "$RIFFLE" --split=12 --output-pattern="$T/c%2d" "$T/in"
    [ -f "$T/c 0" ] && [ -f "$T/c11" ]
    "$RIFFLE" --split=2,2 --output-pattern="$T/train.txt,$T/test.txt" "$T/in"
    [ "$(sizes "$T/train.txt" "$T/test.txt")" = "2 2" ]
    "$RIFFLE" --split=1 --output-pattern="$T/single" "$T/in"
    cmp <(sort "$T/in") <(sort "$T/single")
}

@test "pattern errors are usage errors, and nothing is created" {
    mkdir "$T/d"; seq 4 > "$T/d/in"; cd "$T/d"
    check() { # pattern split message
        run "$RIFFLE" --split="$2" --output-pattern="$1" in
        [ "$status" -eq 1 ]
        [ "${lines[0]}" = "riffle: invalid output pattern '$1': $3" ]
        [ "${lines[1]}" = "Try 'riffle --help' for more information." ]
    }
    check 'p%s' 2 "the only conversions are %d (with an optional width, e.g. %03d) and %%"
    check 'p%ld' 2 "the only conversions are %d (with an optional width, e.g. %03d) and %%"
    check 'p%-3d' 2 "the only conversions are %d (with an optional width, e.g. %03d) and %%"
    check 'p%' 2 "the only conversions are %d (with an optional width, e.g. %03d) and %%"
    check 'p%d-%d' 2 "more than one %d"
    check 'p%%' 2 "no %d (or, without any %, a comma-separated list of names)"
    check 'p%021d' 2 "the width of %d is at most 20"
    check 'a,b' 3 "2 names for 3 parts"
    check 'a,b,c,d' 80%,20% "4 names for 2 parts"
    check 'only' 2 "1 name for 2 parts"
    check 'a,,b' 3 "an empty name"
    check 'a,b,a' 3 "a name given twice"
    [ "$(ls -A)" = in ]
}

@test "--split needs --output-pattern and excludes -o and -r" {
    seq 4 > "$T/in"
    run "$RIFFLE" --split=2 "$T/in"
    [ "$status" -eq 1 ] && [ "${lines[0]}" = "riffle: --split needs --output-pattern" ]
    [ "${lines[1]}" = "Try 'riffle --help' for more information." ]
    run "$RIFFLE" --output-pattern="$T/p%d" "$T/in"
    [ "$status" -eq 1 ] && [ "${lines[0]}" = "riffle: --output-pattern needs --split" ]
    run "$RIFFLE" --split=2 --output-pattern="$T/p%d" -o "$T/out" "$T/in"
    [ "$status" -eq 1 ] && [ "${lines[0]}" = "riffle: cannot combine --split and -o" ]
    run "$RIFFLE" --split=2 --output-pattern="$T/p%d" -r -n 4 "$T/in"
    [ "$status" -eq 1 ] && [ "${lines[0]}" = "riffle: cannot combine --split and -r" ]
    run "$RIFFLE" --split=2 --split=3 --output-pattern="$T/p%d" "$T/in"
    [ "$status" -eq 1 ] && [ "${lines[0]}" = "riffle: multiple split specifications" ]
    [ "$(ls "$T")" = in ]
    # invoked as shuf, the options do not exist
    run "$(dirname "$RIFFLE")/shuf" --split=2 --output-pattern="$T/p%d" "$T/in"
    [ "$status" -eq 1 ] && [ "${lines[0]}" = "shuf: unrecognized option '--split=2'" ]
}

@test "abbreviations of the older options keep working (--s, --out)" {
    [ "$("$RIFFLE" --s=7 -i 1-20)" = "$("$RIFFLE" --seed=7 -i 1-20)" ]
    "$RIFFLE" --out="$T/o" -i 1-3
    [ "$(sort "$T/o")" = "$(seq 3)" ]
    "$RIFFLE" --sp=2 --output-p="$T/p%d" -i 1-3
    [ "$(sizes "$T/p0" "$T/p1")" = "2 1" ]
}

@test "with a seed, the parts concatenated are the unsplit output (every SPEC form, -z, --header)" {
    seq 1000 | sed 's/$/ line/' > "$T/in"
    "$RIFFLE" --seed=split "$T/in" > "$T/whole"
    for spec in 7 "70%,20.5%,9.5%" "100,0,250,*" "1000"; do
        rm -f "$T"/p*
        "$RIFFLE" --seed=split --split="$spec" --output-pattern="$T/p%04d" "$T/in"
        cmp "$T/whole" <(cat "$T"/p*)
    done
    # -n K: the parts are the head of the full shuffle
    rm -f "$T"/p*
    "$RIFFLE" --seed=split -n 300 --split=3 --output-pattern="$T/p%d" "$T/in"
    cmp <(head -n 300 "$T/whole") <(cat "$T"/p*)
    # --header: strip it from each part
    rm -f "$T"/p*
    "$RIFFLE" --seed=h --header=2 "$T/in" > "$T/whole"
    "$RIFFLE" --seed=h --header=2 --split=4 --output-pattern="$T/p%d" "$T/in"
    cmp "$T/whole" <(head -n 2 "$T/p0"; for f in "$T"/p?; do tail -n +3 "$f"; done)
    # -z
    rm -f "$T"/p*
    printf 'a\nA\0b\0c\0d\0e' > "$T/z"
    "$RIFFLE" -z --seed=z "$T/z" > "$T/whole"
    "$RIFFLE" -z --seed=z --split=2 --output-pattern="$T/p%d" "$T/z"
    cmp "$T/whole" <(cat "$T/p0" "$T/p1")
    [ "$(tr -cd '\0' < "$T/p0" | wc -c)" -eq 3 ]
}

@test "-i: numbers are records, in memory and through the keyed permutation" {
    "$RIFFLE" -i 1-10 --split=3 --output-pattern="$T/p%d"
    [ "$(sizes "$T/p0" "$T/p1" "$T/p2")" = "4 3 3" ]
    cmp <(seq 10) <(cat "$T"/p? | sort -n)
    "$RIFFLE" -i 5-104 --seed=4 --header=3 > "$T/whole"
    "$RIFFLE" -i 5-104 --seed=4 --header=3 --split=50%,50% --output-pattern="$T/h%d"
    cmp "$T/whole" <(cat "$T/h0"; tail -n +4 "$T/h1")
    [ "$(head -n 3 "$T/h1")" = "$(seq 5 7)" ]
    # more than 2^20 numbers: streamed, split by count
    "$RIFFLE" -i 0-99999999 -n 1000 --seed=big > "$T/whole"
    "$RIFFLE" -i 0-99999999 -n 1000 --seed=big --split=100,200,* --output-pattern="$T/b%d"
    [ "$(sizes "$T/b0" "$T/b1" "$T/b2")" = "100 200 700" ]
    cmp "$T/whole" <(cat "$T/b0" "$T/b1" "$T/b2")
    "$RIFFLE" -i 10-2000009 --header=2 --seed=big -n 10 --split=5 --output-pattern="$T/c%d"
    [ "$(head -n 2 "$T/c4")" = "$(printf '10\n11')" ] && [ "$(sizes "$T"/c?)" = "4 4 4 4 4" ]
    run "$RIFFLE" -i 0-18446744073709551615 --split=2 --output-pattern="$T/x%d"
    [ "$status" -eq 1 ] && [ "$output" = "riffle: cannot split 2^64 numbers: give -n" ]
    [ ! -e "$T/x0" ]
}

@test "atomic: a part that cannot be created leaves no part and no temporary file" {
    seq 100 > "$T/in"
    mkdir "$T/dir0" "$T/dir1"
    echo keep > "$T/dir0/x"
    run "$RIFFLE" --split=3 --output-pattern="$T/dir%d/x" "$T/in"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/dir2/x: No such file or directory" ]
    [ "$(cat "$T/dir0/x")" = keep ]
    [ "$(ls -A "$T/dir0")" = x ] && [ -z "$(ls -A "$T/dir1")" ]
    # a part under a regular file (fails as root too)
    : > "$T/file"
    run "$RIFFLE" --split=2 --output-pattern="$T/ok,$T/file/no" "$T/in"
    [ "$status" -eq 1 ] && [ "$output" = "riffle: $T/file/no: Not a directory" ]
    [ ! -e "$T/ok" ] && [ -z "$(ls -A "$T" | grep '^\.riffle-' || true)" ]
}

@test "atomic: a write error in one part leaves no part file and no temporary" {
    seq 100000 > "$T/in"
    echo keep > "$T/a"
    run "$RIFFLE" --split=3 --output-pattern="$T/a,/dev/full,$T/c" "$T/in"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: /dev/full: No space left on device" ]
    [ "$(cat "$T/a")" = keep ]
    only_files a in
    # the last part failing: the ones before are not committed either
    run "$RIFFLE" --split=3 --output-pattern="$T/a,$T/b,/dev/full" "$T/in"
    [ "$status" -eq 1 ]
    [ "$(cat "$T/a")" = keep ]
    only_files a in
}

@test "atomic: a read-only directory for one part" {
    # root writes into read-only directories: as root, run as nobody in a
    # directory of the test's own that nobody can reach
    local d as_user=()
    d=$(mktemp -d "${TMPDIR:-/tmp}/riffle-ro.XXXXXX")
    chmod 755 "$d"
    cp "$RIFFLE" "$d/riffle"
    seq 10 > "$d/in"
    mkdir "$d/w" "$d/ro"
    chmod 777 "$d/w"
    chmod 555 "$d/ro"
    [ "$(id -u)" -ne 0 ] || as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    "${as_user[@]}" test -x "$d/riffle" || { rm -rf "$d"; skip "user nobody cannot reach $d"; }
    run "${as_user[@]}" "$d/riffle" --split=2 --output-pattern="$d/w/ok,$d/ro/no" "$d/in"
    local left
    left=$(ls -A "$d/w" "$d/ro" | tr '\n' ' ')
    rm -rf "$d"
    [ "$status" -eq 1 ] && [ "$output" = "riffle: $d/ro/no: Permission denied" ]
    [ "$left" = "$d/ro:  $d/w: " ]
}

@test "parts replace existing files atomically, and a part may be the input" {
    seq 50 > "$T/in"
    cp "$T/in" "$T/orig"
    "$RIFFLE" --split=2 --output-pattern="$T/in,$T/other" "$T/in"
    cmp <(sort "$T/orig") <(cat "$T/in" "$T/other" | sort)
    [ "$(sizes "$T/in" "$T/other")" = "25 25" ]
    only_files in orig other
}

@test "many parts: more than a small open-file limit" {
    seq 3000 > "$T/in"
    mkdir "$T/m"
    # the soft limit is raised as far as the hard one allows
    (ulimit -Sn 256; "$RIFFLE" --split=1000 --output-pattern="$T/m/p%04d" "$T/in")
    [ "$(ls "$T/m" | wc -l)" -eq 1000 ]
    cmp <(sort "$T/in") <(cat "$T"/m/p* | sort)
    [ "$(sizes "$T/m/p0000" "$T/m/p0999")" = "3 3" ]
    # beyond the hard limit: an error before any file is made
    run bash -c 'ulimit -n 256; "$0" --split=1000 --output-pattern="$1/n/p%04d" "$1/in"' "$RIFFLE" "$T"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: 1000 output files exceed the limit of open files (256)" ]
    [ ! -e "$T/n" ]
}

@test "two spellings of one file are refused before anything is written" {
    local riffle
    riffle=$(cd "$(dirname "$RIFFLE")" && pwd)/$(basename "$RIFFLE")
    seq 100 > "$T/in"
    mkdir -p "$T/d"
    echo keep > "$T/a.txt"
    ln "$T/a.txt" "$T/hard.txt"
    ln -s a.txt "$T/sym.txt"
    ln -s new.txt "$T/dangling.txt"
    for pair in "a.txt,./a.txt" "a.txt,d/../a.txt" "a.txt,$T/a.txt" "a.txt,hard.txt" \
                "sym.txt,a.txt" "new.txt,./new.txt" "dangling.txt,new.txt"; do
        first=${pair%%,*} second=${pair#*,}
        run bash -c "cd '$T' && '$riffle' --split=2 --output-pattern='$pair' in"
        [ "$status" -eq 1 ]
        [ "$output" = "riffle: '$first' and '$second' are the same file" ]
        [ "$(cat "$T/a.txt")" = keep ]
        [ ! -e "$T/new.txt" ]
        [ -z "$(ls -A "$T" | grep '^\.riffle-' || true)" ]
    done
    # different files in one directory, or the same name in two: fine
    (cd "$T" && "$riffle" --split=2 --output-pattern=p.txt,d/p.txt in)
    [ "$(cat "$T/p.txt" "$T/d/p.txt" | sort -n)" = "$(seq 100)" ]
}
