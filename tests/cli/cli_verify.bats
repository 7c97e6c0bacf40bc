#!/usr/bin/env bats
# Provably fair dealing: riffle deal --commit (a fresh server seed, its
# commitment before the deal, the seed saved with mode 0600) and riffle
# verify (the commitment and every card checked).  The round trip, each
# tampering caught with a message that names it, malformed input refused,
# the seed file never left behind by a failed run; the pinned deal of the
# library's vector (tests/unit/test_fair.c) through the program; production
# mode.

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
    # the server seed 00 01 .. 1f of the library's vectors, and its SHA-256
    SEED=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
    COMMIT=630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd
}

# A committed bridge deal for client seed "alice", nonce 7, in $T/deal and
# its server seed in $T/seed.
commit_deal() {
    "$RIFFLE" deal --commit --client-seed=alice --nonce=7 --save-seed="$T/seed" \
        -p bridge "$@" > "$T/deal"
}

# SHA-256 of the bytes of a hexadecimal string, by Python's hashlib
sha256_of_hex() {
    python3 -c 'import hashlib, sys; print(hashlib.sha256(bytes.fromhex(sys.argv[1])).hexdigest())' "$1"
}

verify() {
    run "$RIFFLE" verify --server-seed-file="$T/seed" --client-seed=alice --nonce=7 \
        --deal="$T/deal" -p bridge "$@"
}

@test "deal --commit: the commitment first, then the deal; the seed file 0600 and its hash" {
    commit_deal
    [ "$(stat -c %a "$T/seed")" = 600 ]
    grep -Eqx '[0-9a-f]{64}' "$T/seed"
    [ "$(wc -c < "$T/seed")" -eq 65 ]
    [ "$(sed -n 1p "$T/deal")" = "commit: $(sha256_of_hex "$(cat "$T/seed")")" ]
    sed -n 2p "$T/deal" | grep -q '^North: '
    [ "$(wc -l < "$T/deal")" -eq 5 ]
    # all 52 cards, once each
    [ "$(sed 1d "$T/deal" | cut -d: -f2 | tr ' ' '\n' | grep -c .)" -eq 52 ]
    [ "$(sed 1d "$T/deal" | cut -d: -f2 | tr ' ' '\n' | grep . | sort -u | wc -l)" -eq 52 ]
}

@test "verify: the round trip passes, from the seed file or the hex, with or without --commit" {
    commit_deal
    verify
    [ "$status" -eq 0 ]
    [ "$output" = "verified: commitment $(sed -n 's/^commit: //p' "$T/deal")" ]
    run "$RIFFLE" verify --server-seed="$(cat "$T/seed")" --client-seed=alice --nonce=7 \
        --commit="$(sed -n 's/^commit: //p' "$T/deal")" --deal=- -p bridge < "$T/deal"
    [ "$status" -eq 0 ]
    # the deal without its commit line, the commitment given in upper case
    sed 1d "$T/deal" > "$T/bare"
    run "$RIFFLE" verify --server-seed-file="$T/seed" --client-seed=alice --nonce=7 \
        --commit="$(sed -n 's/^commit: //p' "$T/deal" | tr a-f A-F)" --deal="$T/bare" -p bridge
    [ "$status" -eq 0 ]
    # without --deal: the same text as deal --commit printed
    run "$RIFFLE" verify --server-seed-file="$T/seed" --client-seed=alice --nonce=7 \
        --commit="$(sed -n 's/^commit: //p' "$T/deal")" -p bridge
    [ "$status" -eq 0 ]
    [ "$output" = "$(cat "$T/deal")" ]
}

@test "verify: other deck options round-trip too (hands, kitty, custom deck, --rank)" {
    "$RIFFLE" deal --commit --save-seed="$T/seed" --client-seed=alice --nonce=7 \
        -H 3 -c 5 -k 2 --rank > "$T/deal"
    run "$RIFFLE" verify --server-seed-file="$T/seed" --client-seed=alice --nonce=7 \
        --deal="$T/deal" -H 3 -c 5 -k 2 --rank
    [ "$status" -eq 0 ]
    rm "$T/seed"
    "$RIFFLE" deal --commit --save-seed="$T/seed" -H 2 one two three four > "$T/deal"
    run "$RIFFLE" verify --server-seed-file="$T/seed" --deal="$T/deal" -H 2 one two three four
    [ "$status" -eq 0 ]
}

@test "verify: a tampered server seed fails on the commitment" {
    commit_deal
    seed=$(cat "$T/seed")
    last=${seed: -1}
    [ "$last" = 0 ] && flip=1 || flip=0
    run "$RIFFLE" verify --server-seed="${seed%?}$flip" --client-seed=alice --nonce=7 \
        --deal="$T/deal" -p bridge
    [ "$status" -eq 1 ]
    [[ "$output" == "riffle: commitment mismatch: SHA-256 of the server seed is "*", the commitment is $(sed -n 's/^commit: //p' "$T/deal")" ]]
}

@test "verify: a tampered commitment fails, in --commit or in the deal's line" {
    commit_deal
    run "$RIFFLE" verify --server-seed-file="$T/seed" --client-seed=alice --nonce=7 \
        --deal="$T/deal" -p bridge --commit="$COMMIT"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: commitment mismatch: --commit is not the commitment of $T/deal" ]
    sed "1s/.*/commit: $COMMIT/" "$T/deal" > "$T/forged"
    run "$RIFFLE" verify --server-seed-file="$T/seed" --client-seed=alice --nonce=7 \
        --deal="$T/forged" -p bridge
    [ "$status" -eq 1 ]
    [[ "$output" == "riffle: commitment mismatch: SHA-256 of the server seed is "*", the commitment is $COMMIT" ]]
}

@test "verify: a tampered client seed or nonce fails on the first card that differs" {
    commit_deal
    run "$RIFFLE" verify --server-seed-file="$T/seed" --client-seed=alicf --nonce=7 \
        --deal="$T/deal" -p bridge
    [ "$status" -eq 1 ]
    [[ "$output" == "riffle: $T/deal: deal mismatch: "*" card "*" is '"*"', the seeds deal '"*"'" ]]
    run "$RIFFLE" verify --server-seed-file="$T/seed" --client-seed=alice --nonce=8 \
        --deal="$T/deal" -p bridge
    [ "$status" -eq 1 ]
    [[ "$output" == "riffle: $T/deal: deal mismatch: "*" card "*" is '"*"', the seeds deal '"*"'" ]]
    # the client seed's default is empty, the nonce's 0: not these
    run "$RIFFLE" verify --server-seed-file="$T/seed" --deal="$T/deal" -p bridge
    [ "$status" -eq 1 ]
}

@test "verify: two swapped cards are named by position" {
    commit_deal
    read -r _ a b _ <<< "$(sed -n 3p "$T/deal")"   # East's first two cards
    awk -v a="$a" -v b="$b" 'NR == 3 { $2 = b; $3 = a } { print }' OFS=' ' "$T/deal" > "$T/swapped"
    # awk rejoins East's line with single spaces, as printed
    cmp <(sed 3d "$T/deal") <(sed 3d "$T/swapped")
    verify --deal="$T/swapped"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: multiple deals specified" ]
    run "$RIFFLE" verify --server-seed-file="$T/seed" --client-seed=alice --nonce=7 \
        --deal="$T/swapped" -p bridge
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/swapped: deal mismatch: East card 1 is '$b', the seeds deal '$a'" ]
}

@test "verify: a deal cut short, with a line more, or dealt with other options fails" {
    commit_deal
    head -n 3 "$T/deal" > "$T/short"
    run "$RIFFLE" verify --server-seed-file="$T/seed" --client-seed=alice --nonce=7 \
        --deal="$T/short" -p bridge
    [ "$status" -eq 1 ]
    [[ "$output" == "riffle: $T/short: deal mismatch: the deal ends before line 4, 'South: "* ]]
    { cat "$T/deal"; echo extra; } > "$T/long"
    run "$RIFFLE" verify --server-seed-file="$T/seed" --client-seed=alice --nonce=7 \
        --deal="$T/long" -p bridge
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/long: deal mismatch: line 6, 'extra', is more than the seeds deal" ]
    sed '2s/ [^ ]*$//' "$T/deal" > "$T/fewer"
    run "$RIFFLE" verify --server-seed-file="$T/seed" --client-seed=alice --nonce=7 \
        --deal="$T/fewer" -p bridge
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/fewer: deal mismatch: North has 12 cards, the seeds deal more" ]
    run "$RIFFLE" verify --server-seed-file="$T/seed" --client-seed=alice --nonce=7 \
        --deal="$T/deal" -H 4
    [ "$status" -eq 1 ]
    [[ "$output" == "riffle: $T/deal: deal mismatch: line 2 is 'North: "*"', the seeds deal 'hand 1: "* ]]
}

@test "verify: malformed hex, seed files and options are refused" {
    commit_deal
    for bad in "" abc "$(printf 'g%.0s' {1..64})" "${COMMIT}0" "${COMMIT:1}"; do
        run "$RIFFLE" verify --server-seed="$bad" --commit="$COMMIT"
        [ "$status" -eq 1 ]
        [ "${lines[0]}" = "riffle: invalid server seed '$bad' (64 hexadecimal digits)" ]
        [ "${lines[1]}" = "Try 'riffle verify --help' for more information." ]
        run "$RIFFLE" verify --server-seed="$SEED" --commit="$bad"
        [ "$status" -eq 1 ]
        [ "${lines[0]}" = "riffle: invalid commitment '$bad' (64 hexadecimal digits)" ]
    done
    printf '%s\n\n' "$SEED" > "$T/twolines"
    printf 'xyz\n' > "$T/notseed"
    for f in twolines notseed; do
        run "$RIFFLE" verify --server-seed-file="$T/$f" --commit="$COMMIT"
        [ "$status" -eq 1 ]
        [ "$output" = "riffle: $T/$f: not a server seed (64 hexadecimal digits)" ]
    done
    run "$RIFFLE" verify --server-seed-file="$T/missing" --commit="$COMMIT"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/missing: No such file or directory" ]
    run "$RIFFLE" verify --server-seed="$SEED" --commit="$COMMIT" --deal="$T"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T: Is a directory" ]
    run "$RIFFLE" verify --commit="$COMMIT"
    [ "$status" -eq 1 ]
    [[ "${lines[0]}" == "riffle: the server seed is missing"* ]]
    run "$RIFFLE" verify --server-seed="$SEED"
    [ "$status" -eq 1 ]
    [[ "${lines[0]}" == "riffle: no commitment to check"* ]]
    run "$RIFFLE" verify --server-seed="$SEED" --commit="$COMMIT" --nonce=-1
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: invalid nonce '-1' (0 to 2^64-1)" ]
    printf 'commit: nothex\nNorth: AS\n' > "$T/badline"
    run "$RIFFLE" verify --server-seed="$SEED" --deal="$T/badline"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/badline: line 1: invalid commitment (64 hexadecimal digits)" ]
    run "$RIFFLE" verify --server-seed="$SEED" --commit="$COMMIT" --seed=1
    [ "$status" -eq 1 ]
    # deal's deck options, refused in verify's name; a shoe is not verified
    run "$RIFFLE" verify --server-seed="$SEED" --commit="$COMMIT" -H 0
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: the number of hands must be at least 1" ]
    [ "${lines[1]}" = "Try 'riffle verify --help' for more information." ]
    run "$RIFFLE" verify --server-seed="$SEED" --commit="$COMMIT" -p baccarat
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: --preset cannot be verified" ]
}

@test "the library's vector through the program: seed 00..1f, alice, nonce 0" {
    # tests/unit/test_fair.c pins this deal as card numbers 9 40 19 24 ...:
    # deck order S H D C, A..K, so 9 = 10S, 40 = 2C, 19 = 7H, 24 = QH
    run "$RIFFLE" verify --server-seed="$SEED" --commit="$COMMIT" --client-seed=alice -H 1
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "commit: $COMMIT" ]
    [[ "${lines[1]}" == "hand 1: 10S 2C 7H QH "* ]]
    # the commitment is SHA-256 of the seed's bytes
    [ "$(sha256_of_hex "$SEED")" = "$COMMIT" ]
}

@test "deal --commit: refusals, and no seed file left by a failed run" {
    run "$RIFFLE" deal --commit
    [ "$status" -eq 1 ]
    [[ "${lines[0]}" == "riffle: --commit needs --save-seed=FILE"* ]]
    for args in "--seed=1" "--rng=pcg64" "--json" "--count=2" "-p blackjack"; do
        run "$RIFFLE" deal --commit --save-seed="$T/s" $args
        [ "$status" -eq 1 ]
        [ "${lines[1]}" = "Try 'riffle deal --help' for more information." ]
        [ ! -e "$T/s" ]
    done
    for opt in --client-seed=a --nonce=1 --save-seed="$T/s"; do
        run "$RIFFLE" deal "$opt"
        [ "$status" -eq 1 ]
        [ "${lines[0]}" = "riffle: ${opt%%=*} needs --commit" ]
    done
    # never over an existing file, which stays as it was
    echo keep > "$T/s"
    run "$RIFFLE" deal --commit --save-seed="$T/s"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/s: File exists" ]
    [ "$(cat "$T/s")" = keep ]
    # an output that fails after the seed was saved: the seed goes too
    run bash -c '"$1" deal --commit --save-seed="$2" -p bridge > /dev/full' _ "$RIFFLE" "$T/t"
    [ "$status" -eq 1 ]
    [[ "$output" == "riffle: write error: "* ]]
    [ ! -e "$T/t" ]
    # a directory that cannot be written
    run "$RIFFLE" deal --commit --save-seed="$T/nodir/s"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/nodir/s: No such file or directory" ]
}

@test "production mode: --commit is the production path; --seed and --random-source refused" {
    run "$RIFFLE" deal --production --commit --save-seed="$T/s" -p bridge
    [ "$status" -eq 0 ]
    [ -s "$T/s" ]
    RIFFLE_PRODUCTION=1 run "$RIFFLE" deal --commit --save-seed="$T/s2"
    [ "$status" -eq 0 ]
    RIFFLE_PRODUCTION=1 run "$RIFFLE" deal --commit --save-seed="$T/s3" --seed=1
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: --seed is refused in production mode (RIFFLE_PRODUCTION): a live stream must never repeat a prior one" ]
    [ ! -e "$T/s3" ]
    # --random-source, set by the environment alone, in every command that takes it
    head -c 32 /dev/zero > "$T/key"
    for cmd in "rng --bytes=8" "sample -n1" ""; do
        RIFFLE_PRODUCTION=1 run "$RIFFLE" $cmd --random-source="$T/key" < /dev/null
        [ "$status" -eq 1 ]
        [[ "${lines[0]}" == "riffle: --random-source is refused in production mode (RIFFLE_PRODUCTION)"* ]]
        RIFFLE_PRODUCTION=0 run "$RIFFLE" $cmd --random-source="$T/key" < /dev/null
        [ "$status" -eq 0 ]
    done
    # deal takes no --random-source at all
    run "$RIFFLE" deal --random-source="$T/key"
    [ "$status" -eq 1 ]
}

@test "docs/provably-fair.md: its Python check deals what riffle deals" {
    # the script is the ```python block of the page, written from the
    # derivation's steps alone (its own ChaCha20 and Lemire draws)
    sed -n '/^```python$/,/^```$/p' "$BATS_TEST_DIRNAME/../../docs/provably-fair.md" |
        sed '1d;$d' > "$T/check.py"
    [ "$(wc -l < "$T/check.py")" -gt 40 ]
    run python3 "$T/check.py" "$SEED" alice 0
    [ "$status" -eq 0 ]
    [ "$output" = "$("$RIFFLE" verify --server-seed="$SEED" --commit="$COMMIT" --client-seed=alice -H 1)" ]
    # a fresh seed, another client seed and a large nonce
    "$RIFFLE" deal --commit --save-seed="$T/seed" --client-seed='p 42:é' \
        --nonce=18446744073709551615 -H 1 > "$T/deal"
    run python3 "$T/check.py" "$(cat "$T/seed")" 'p 42:é' 18446744073709551615
    [ "$status" -eq 0 ]
    [ "$output" = "$(cat "$T/deal")" ]
}

@test "riffle --help lists verify among the commands; verify --help" {
    run "$RIFFLE" --help
    [ "$status" -eq 0 ]
    [[ "$output" == *"gather, rng, verify (riffle COMMAND --help)"* ]]
    run "$RIFFLE" verify --help
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "Usage: riffle verify --server-seed=HEX [OPTION]... [CARD]..." ]
    run "$RIFFLE" deal --help
    [[ "$output" == *"--commit "* ]] && [[ "$output" == *"--save-seed=FILE"* ]]
}
