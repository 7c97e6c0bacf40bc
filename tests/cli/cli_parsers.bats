#!/usr/bin/env bats
# The parsers of riffle's input and options held to their grammar: a byte no
# number or card may hold (NUL above all) is an error naming its line and
# column, never the silent end of a token; tiny and huge weights drawn as
# their ratios say; JSON that is always valid UTF-8; the equivalences the
# documentation promises between `riffle perm` and `riffle -i`; shuf's
# quoting and repeated-option rules; and the CLI cases of sanitizer reports.

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
}

flat() { tr '\n' ' ' | sed 's/ $//'; }

# ---- bytes outside the grammar ----

@test "rank: a NUL inside the input is an error at its line and column" {
    run bash -c "printf '1 0\\0002\\n' | '$RIFFLE' rank"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: -:1:4: invalid byte '\\000'" ]
    # the same items without the NUL byte: the rank of 1 0 2 is 2
    [ "$(printf '1 0 2\n' | "$RIFFLE" rank)" = 2 ]
    run bash -c "printf '0 1\\n2,\\0013\\n' | '$RIFFLE' rank"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: -:2:3: invalid byte '\\001'" ]
}

@test "perm: a NUL ends no index silently" {
    run bash -c "printf '3\\000x\\n' | '$RIFFLE' perm -s 10 --seed=1"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: -:1:2: invalid byte '\\000'" ]
    # what came before the bad line is printed, as for any bad index
    run bash -c "printf '3\\n\\n 4\\000\\n' | '$RIFFLE' perm -s 10 --seed=1"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "$("$RIFFLE" perm -s 10 --seed=1 3)" ]
    [ "${lines[1]}" = "riffle: -:3:3: invalid byte '\\000'" ]
    run bash -c "printf '3\\177\\n' | '$RIFFLE' perm -s 10 --seed=1"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: -:1:2: invalid byte '\\177'" ]
}

@test "unrank: a NUL after the rank is an error" {
    run bash -c "printf '1\\0009\\n' | '$RIFFLE' unrank -s 3"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: -:1:2: invalid byte '\\000'" ]
    # blanks of every kind (CR included) still separate
    [ "$(printf '1 0 2\r\n' | "$RIFFLE" rank)" = 2 ]
    [ "$(printf '\t1\r\n' | "$RIFFLE" unrank -s 3 | flat)" = "0 2 1" ]
}

@test "sample: a NUL in a weight field is an error at its line and column" {
    run bash -c "printf 'a 1\\nb 3\\000x\\n' | '$RIFFLE' sample -n 2 -w 2 --seed=1"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: -:2:4: invalid byte '\\000'" ]
    printf 'a,1\nb,\0002\n' > "$T/w"
    run "$RIFFLE" sample -n 1 -w 2 -d , --seed=1 "$T/w"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/w:2:3: invalid byte '\\000'" ]
    # a NUL elsewhere in the record is data, not a weight
    printf 'a\0b 1\n' > "$T/d"
    "$RIFFLE" sample -n 1 -w 2 --seed=1 "$T/d" | cmp - "$T/d"
}

# ---- weights at the ends of the double range ----

@test "sample: two equal subnormal weights are drawn half and half" {
    printf 'a 1e-310\nb 1e-310\n' > "$T/w"
    # fixed seeds: a binomial(200, 1/2) count, 70..130 is beyond 4 sigma
    a=$(for s in $(seq 1 200); do "$RIFFLE" sample -n 1 -w 2 --seed=$s "$T/w"; done | grep -c '^a')
    echo "first item chosen $a times of 200"
    [ "$a" -ge 70 ]
    [ "$a" -le 130 ]
    # a huge weight first, then the tiny ones in their own ratio
    printf 'h 1e308\nt 1e-310\n' > "$T/m"
    [ "$("$RIFFLE" sample -n 2 -w 2 --seed=1 "$T/m" | flat)" = "h 1e308 t 1e-310" ]
}

# ---- JSON ----

# A strict parser: json.tool opens a file argument as UTF-8, strictly (on
# standard input, under LC_ALL=C, it would take invalid bytes as surrogates).
json_valid() { /usr/bin/python3 -m json.tool "$1" > /dev/null; }

@test "deal -j: JSON always valid UTF-8, invalid bytes as U+FFFD" {
    [ -x /usr/bin/python3 ] || skip "no /usr/bin/python3"
    "$RIFFLE" deal -j --seed=1 -H 1 $'\xff' $'A\xe2\x99' $'\xe2\x99\xa0' $'\xed\xa0\x80' \
        $'\xc0\xaf' $'\xf4\x90\x80\x80' 'q"\' $'t\tx' > "$T/j.json"
    json_valid "$T/j.json"
    # every card name, as the parser reads it back: each bad byte one U+FFFD,
    # well-formed UTF-8 (U+2660) and escapes kept
    /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
for c in sorted(d["hands"][0]["cards"]):
    print(ascii(c))' "$T/j.json" > "$T/names"
    cat > "$T/want" <<'EOT'
'A\ufffd\ufffd'
'q"\\'
't\tx'
'\u2660'
'\ufffd'
'\ufffd\ufffd'
'\ufffd\ufffd\ufffd'
'\ufffd\ufffd\ufffd\ufffd'
EOT
    diff "$T/want" "$T/names"
    # a --deck-file deck of Latin-1 names, with --rank
    printf 'K\xf6nig\nDame\nBube\n' > "$T/deck"
    "$RIFFLE" deal -j --rank --seed=2 -H 1 -f "$T/deck" > "$T/f.json"
    json_valid "$T/f.json"
    grep -q 'K\\ufffdnig' "$T/f.json"
}

@test "deal -f: the CR of CRLF lines is not part of the card names" {
    printf 'AS\r\nKH\r\n\r\nQD\r\n' > "$T/crlf"
    printf 'AS\nKH\nQD\n' > "$T/lf"
    # the same deal, byte for byte, as from the LF file; no CR anywhere
    "$RIFFLE" deal --seed=3 -H 3 -f "$T/crlf" > "$T/a"
    "$RIFFLE" deal --seed=3 -H 3 -f "$T/lf" | cmp - "$T/a"
    [ "$(grep -c $'\r' "$T/a")" -eq 0 ]
    "$RIFFLE" deal -j --seed=3 -H 1 -f "$T/crlf" > "$T/j"
    [ "$(grep -c '\\r' "$T/j")" -eq 0 ]
    # --rank ranks 3 cards, not 4 (the CR-only line is empty)
    [ "$("$RIFFLE" deal --rank --seed=3 -H 1 -f "$T/crlf" | sed -n 's/^rank: //p')" = \
      "$("$RIFFLE" deal --rank --seed=3 -H 1 -f "$T/lf" | sed -n 's/^rank: //p')" ]
}

# ---- cases from sanitizer reports ----

# An empty first file, then one file twice: the block reserved by the empty
# read was lost when the next file was mapped (a LeakSanitizer report on the
# sanitizer build, which runs this suite too: a leak there exits non-zero).
@test "an empty file, then the same file twice: output as without it, nothing lost" {
    : > "$T/EMPTY"
    seq 1 5000 > "$T/a"
    run "$RIFFLE" --seed=1 "$T/EMPTY" "$T/a" "$T/a"
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 10000 ]
    [ "$output" = "$("$RIFFLE" --seed=1 "$T/a" "$T/a")" ]
    run "$RIFFLE" --seed=1 "$T/EMPTY" "$T/EMPTY" "$T/a" "$T/a" -o "$T/out"
    [ "$status" -eq 0 ]
    [ "$output" = "" ]
    "$RIFFLE" --seed=1 "$T/a" "$T/a" | cmp - "$T/out"
}

# ---- what the documentation promises about perm and -i ----

@test "perm --help and the man page: above 2^20, line i of riffle -i is LO + p(i)" {
    # the help states it
    run "$RIFFLE" perm --help
    [[ "$output" == *"For N > 2^20 (--mode=auto or siphash), p is the order in which"* ]]
    N=1048577 # 2^20 + 1, the smallest range streamed through p
    p=$("$RIFFLE" perm --size $N --seed=x $(seq 0 999) | flat)
    [ "$p" = "$("$RIFFLE" perm --size $N --seed=x --mode=siphash $(seq 0 999) | flat)" ]
    # -n K is the head of the whole output, whatever --rng
    [ "$("$RIFFLE" -i 0-$((N - 1)) --seed=x | head -n 1000 | flat)" = "$p" ]
    for rng in chacha20 xoshiro256++ pcg64; do
        [ "$("$RIFFLE" -i 0-$((N - 1)) --seed=x --rng=$rng -n 1000 | flat)" = "$p" ]
    done
    # LO-HI: LO + p(i)
    [ "$("$RIFFLE" -i 7-$((N + 6)) --seed=x -n 1000 | flat)" = \
      "$(echo "$p" | tr ' ' '\n' | awk '{ print $1 + 7 }' | flat)" ]
    # the whole 64-bit range, and a string seed
    [ "$("$RIFFLE" -i 0-18446744073709551615 --seed=some-words -n 3 | flat)" = \
      "$("$RIFFLE" perm --size 18446744073709551616 --seed=some-words 0 1 2 | flat)" ]
    # the inverse: p^-1 of line i is i
    [ "$("$RIFFLE" -i 0-$((N - 1)) --seed=x -n 5 | "$RIFFLE" perm --size $N --seed=x -I | flat)" = \
      "0 1 2 3 4" ]
}

@test "up to 2^20 numbers, -i is the keyed order of seq's lines, not perm's table" {
    N=1048576 # 2^20
    [ "$("$RIFFLE" -i 0-$((N - 1)) --seed=x -n 1000 | flat)" = \
      "$(seq 0 $((N - 1)) | "$RIFFLE" --seed=x -n 1000 | flat)" ]
    [ "$("$RIFFLE" -i 0-$((N - 1)) --seed=x -n 1000 | flat)" != \
      "$("$RIFFLE" perm --size $N --seed=x $(seq 0 999) | flat)" ]
    # a file, standard input, -e and -i holding the same records: one output
    seq 5 104 > "$T/in"
    "$RIFFLE" --seed=9 -i 5-104 > "$T/i"
    "$RIFFLE" --seed=9 "$T/in" | cmp - "$T/i"
    "$RIFFLE" --seed=9 < "$T/in" | cmp - "$T/i"
    "$RIFFLE" --seed=9 -e $(seq 5 104) | cmp - "$T/i"
    # and -n K is the head of the full shuffle
    "$RIFFLE" --seed=9 -i 5-104 -n 10 | cmp - <(head -n 10 "$T/i")
}

# ---- drop-in details ----

# GNU shuf named "shuf" in its messages.
gnu() { (exec -a shuf /usr/bin/shuf "$@"); }

# The locales to compare in: C always, and the UTF-8 ones this machine has.
utf8_locales() {
    locale -a 2> /dev/null | grep -Eix 'c\.utf-?8|en_US\.utf-?8' | sort -u
}

@test "quote(): riffle's quotes are GNU shuf's in the C and UTF-8 locales" {
    GNU=/usr/bin/shuf
    "$GNU" --version 2> /dev/null | grep -q 'GNU coreutils' || skip "no GNU shuf to compare"
    [ -n "$(utf8_locales)" ] || skip "no UTF-8 locale installed"
    SHUF="$(dirname "$RIFFLE")/shuf"
    : > "$T/EMPTY"
    n=0
    for loc in C $(utf8_locales); do
        for a in x "it's" $'a\xe2\x80\x99b' $'\x01\x7f' $'\xc2\x85' $'\xe2\x80\x8b' 'a\b' \
            $'\xe2\x80' $'\xe2\x80x' $'\xf0\x9f\x82\xa1' $'\xed\xa0\x80' '"q"' $'\xc2\xa0' \
            $'\xe2\x80\x98' $'\n\t\r' $'x\xc3\xa9' $'\xff\xfe' ''; do
            for args in "-n" "-i"; do
                want=$(LC_ALL=$loc gnu $args "$a" -e 2>&1 || true)
                got=$(LC_ALL=$loc "$SHUF" $args "$a" -e 2>&1 || true)
                [ "$got" = "$want" ] || { echo "$loc shuf $args: got '$got' want '$want'"; false; }
                # riffle's own name: the same quotes after its own prefix
                got=$(LC_ALL=$loc "$RIFFLE" $args "$a" -e 2>&1 || true)
                [ "$got" = "${want//shuf/riffle}" ] || { echo "$loc riffle $args: '$got'"; false; }
                n=$((n + 1))
            done
        done
        want=$(LC_ALL=$loc gnu --random-source="$T/EMPTY" -e a b 2>&1 || true)
        [ "$(LC_ALL=$loc "$SHUF" --random-source="$T/EMPTY" -e a b 2>&1 || true)" = "$want" ]
    done
    # LANG and LC_CTYPE count too, LC_ALL first, LC_MESSAGES not
    loc=$(utf8_locales | head -n 1)
    [ "$(env -u LC_ALL LANG=$loc "$SHUF" -i x 2>&1 | head -n 1)" = "shuf: invalid input range: ‘x’" ]
    [ "$(env -u LC_ALL LANG=C LC_CTYPE=$loc "$SHUF" -i x 2>&1 | head -n 1)" = \
      "shuf: invalid input range: ‘x’" ]
    [ "$(env LANG=$loc LC_ALL=C "$SHUF" -i x 2>&1 | head -n 1)" = "shuf: invalid input range: 'x'" ]
    [ "$(env -u LC_ALL -u LANG LC_MESSAGES=$loc "$SHUF" -i x 2>&1 | head -n 1)" = \
      "shuf: invalid input range: 'x'" ]
    echo "$n messages compared"
}

@test "a repeated option: one rule in every command, shuf's" {
    seq 10 > "$T/ten"
    # a count keeps the smallest value, in either order, as shuf -n does
    for n in "-n 3 -n 5" "-n 5 -n 3" "--count=9 -n 3 --count=4"; do
        [ "$("$RIFFLE" sample $n --seed=1 "$T/ten" | wc -l)" -eq 3 ]
        [ "$("$RIFFLE" ${n//--count/--head-count} --seed=1 "$T/ten" | wc -l)" -eq 3 ]
    done
    [ "$("$RIFFLE" sample -n 5 -n 3 --seed=1 "$T/ten")" = \
      "$("$RIFFLE" sample -n 3 --seed=1 "$T/ten")" ]
    # any other option: the same value again is fine, another is an error
    [ "$("$RIFFLE" perm -s 10 -s 10 --seed=1 --seed=1 3)" = "$("$RIFFLE" perm -s 10 --seed=1 3)" ]
    check() { # EXPECTED-MESSAGE COMMAND...
        local want=$1
        shift
        run "$RIFFLE" "$@"
        [ "$status" -eq 1 ] || { echo "$* -> status $status"; false; }
        [ "${lines[0]}" = "riffle: $want" ] || { echo "$* -> ${lines[0]}"; false; }
    }
    check "multiple sizes specified" perm -s 10 -s 20 1
    check "multiple modes specified" perm -s 10 --mode=table --mode=siphash 1
    check "multiple seeds specified" perm -s 10 --seed=1 --seed=2 1
    check "multiple sizes specified" rank -s 3 --size=4 0 1 2
    check "multiple sizes specified" unrank -s 3 -s 4 0
    check "multiple seeds specified" sample -n 1 --seed=1 --seed=2 "$T/ten"
    check "multiple generators specified" sample -n 1 --rng=pcg64 --rng=xoshiro256++ "$T/ten"
    check "multiple weight fields specified" sample -n 1 -w 1 -w 2 "$T/ten"
    check "multiple delimiters specified" sample -n 1 -w 1 -d , -d : "$T/ten"
    check "multiple hand counts specified" deal -H 2 --players=3
    check "multiple card counts specified" deal -c 2 -c 3
    check "multiple kitty sizes specified" deal -k 2 -k 3
    check "multiple decks specified" deal -d 52 -d 54
    check "multiple presets specified" deal -p bridge -p holdem
    check "multiple seeds specified" deal --seed=1 --seed=2
    check "multiple seeds specified" --seed=1 --seed=2 -e a
    check "multiple memory sizes specified" --memory=1M --memory=2M -e a
    check "multiple thread counts specified" --threads=1 --threads=2 -e a
    check "multiple header line counts specified" --header=1 --header=2 -e a
    check "multiple temporary directories specified" -T "$T" -T / -e a
    [ "$("$RIFFLE" --memory=1M --memory=1M --threads=1 --threads=1 --header=1 --header=1 \
        -T "$T" -T "$T" --seed=1 "$T/ten")" = "$("$RIFFLE" --header=1 --seed=1 "$T/ten")" ]
    # scatter and gather
    local place="--task=0 --tasks=1 --dir=$T --seed=1"
    check "multiple task numbers specified" gather $place --task=1
    check "multiple task counts specified" gather $place --tasks=2
    check "multiple directories specified" gather $place --dir=/
    check "multiple output files specified" gather $place -o a -o b
    check "multiple temporary directories specified" gather $place -T "$T" -T /
    check "multiple memory sizes specified" gather $place --memory=1M --memory=2M
    check "multiple thread counts specified" gather $place --threads=1 --threads=2
    check "multiple header line counts specified" scatter $place --count --header=1 --header=2
    check "multiple task numbers specified" scatter $place --count --task=1
    run "$RIFFLE" scatter $place --task=0 --tasks=1 --dir="$T" --count "$T/ten"
    [ "$status" -eq 0 ]
    # audit
    check "multiple seeds specified" audit naive --seed=1 --seed=2
    check "multiple deck sizes specified" audit naive --n=3 --n=4
    check "multiple trial counts specified" audit naive --trials=10 --trials=20
    check "multiple commands specified" audit --cmd=cat --cmd=tac
    check "multiple timeouts specified" audit --cmd=cat --timeout=1 --timeout=2
    check "multiple alphas specified" audit naive --alpha=0.01 --alpha=0.02
    run "$RIFFLE" audit naive --exact --n=3 --n=3 --alpha=0.01 --alpha=0.01
    [ "$status" -eq 2 ]
    [[ "$output" == *"verdict: biased"* ]]
}

@test "quotef(): file names in messages quoted as GNU shuf quotes them" {
    GNU=/usr/bin/shuf
    "$GNU" --version 2> /dev/null | grep -q 'GNU coreutils' || skip "no GNU shuf to compare"
    SHUF="$(dirname "$RIFFLE")/shuf"
    cd "$T"
    n=0
    for loc in C $(utf8_locales); do
        for name in nonexist 'a b' "it's" "it's \$x" "a'b\"c" '' $'a\nb' $'\x01' $'\t' \
            $'\xc3\xa9x' $'x\xc3\xa9' $'\xffa b' $'\xe2\x80' $'x\xe2\x80\x99' "#x" "x#" "~x" \
            "x~" x:y =x @x '{x}' ']x' '%+,-._' '!x' '$x' '&x' '(x)' '*x' ';x' '<x>' '?x' '[x' \
            'x\y' '^x' '`x' '|x' '"x' "it's é" $'a\'b\x01' $'\x01\'a\x02' $'a\'b\x01c\'d'; do
            want=$(LC_ALL=$loc gnu "$name" 2>&1 || true)
            got=$(LC_ALL=$loc "$SHUF" "$name" 2>&1 || true)
            [ "$got" = "$want" ] || { echo "$loc shuf [$name]: got '$got' want '$want'"; false; }
            # riffle's own name, the shuffle and sample alike
            got=$(LC_ALL=$loc "$RIFFLE" "$name" 2>&1 || true)
            [ "$got" = "${want/shuf:/riffle:}" ] || { echo "$loc riffle [$name]: '$got'"; false; }
            got=$(LC_ALL=$loc "$RIFFLE" sample -n 1 "$name" 2>&1 || true)
            [ "$got" = "${want/shuf:/riffle:}" ] || { echo "$loc sample [$name]: '$got'"; false; }
            n=$((n + 1))
        done
    done
    echo "$n names compared"
}

@test "the man page's round trip: riffle rank of a one-hand deal, riffle unrank --cards back" {
    hand=$("$RIFFLE" deal -H 1 --seed=3 | cut -d' ' -f3-)
    rank=$("$RIFFLE" rank $hand)
    # the number deal --rank prints for the same deal
    [ "$("$RIFFLE" deal -H 1 --seed=3 --rank | tail -n 1)" = "rank: $rank" ]
    [ "$("$RIFFLE" unrank --cards "$rank" | flat)" = "$hand" ]
    # and from standard input, commas and newlines separating
    [ "$(echo "$hand" | tr ' ' ',' | "$RIFFLE" rank)" = "$rank" ]
}

@test "an item read from standard input is named by its line and column when it is wrong" {
    run bash -c "printf '1\\n2\\n zz\\n' | '$RIFFLE' perm -s 10 --seed=1"
    [ "$status" -eq 1 ]
    [ "${lines[2]}" = "riffle: -:3:2: invalid index 'zz'" ]
    run bash -c "printf '1 11\\n' | '$RIFFLE' perm -s 10 --seed=1"
    [ "${lines[1]}" = "riffle: -:1:3: index '11' is out of range for size 10" ]
    run bash -c "printf '0 1\\n 2,x\\n' | '$RIFFLE' rank"
    [ "$output" = "riffle: -:2:4: invalid number 'x' (item 4)" ]
    run bash -c "printf 'AS KH\\n\\tZZ\\n' | '$RIFFLE' rank"
    [ "$output" = "riffle: -:2:2: invalid card 'ZZ' (item 3)" ]
    run bash -c "printf '\\n\\n  x9\\n' | '$RIFFLE' unrank -s 3"
    [ "$output" = "riffle: -:3:3: invalid rank 'x9'" ]
    run bash -c "printf ' \\n 1 2' | '$RIFFLE' unrank -s 3"
    [ "$output" = "riffle: -:2:4: extra input '2' after the rank" ]
    # from the arguments, no position: the argument is the item
    run "$RIFFLE" rank 0 x
    [ "$output" = "riffle: invalid number 'x' (item 2)" ]
}
