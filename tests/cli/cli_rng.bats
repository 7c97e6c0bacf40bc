#!/usr/bin/env bats
# riffle rng: the raw and scaled streams, their bytes pinned against the
# library's known answers, bounds, formats, errors, a closed pipe; and the
# production mode of every command that takes a seed.

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    unset RIFFLE_PRODUCTION
    T="$BATS_TEST_TMPDIR"
    head -c 32 /dev/zero > "$T/zero.key"
}

hex() { od -An -v -tx1 | tr -d ' \n'; }

@test "raw stream: --seed=2026 gives the library's golden first words" {
    # tests/unit/test_golden.c: the first words of rf_rng_seed_u64(2026), each
    # written little-endian (rf_rng_fill).
    [ "$("$RIFFLE" rng --seed=2026 --bytes=24 | od -An -v -tx8 | tr -s ' \n' ' ')" = \
      " fb59d894fcf26b65 1cb62fcd120236bd ef54ff23adf744fd " ]
    [ "$("$RIFFLE" rng --rng=xoshiro256++ --seed=2026 --bytes=24 | od -An -v -tx8 | tr -s ' \n' ' ')" = \
      " ca60efaa8061eb05 1dfef0826fe69998 bbc58d892f2cf863 " ]
    [ "$("$RIFFLE" rng --rng=pcg64 --seed=2026 --bytes=24 | od -An -v -tx8 | tr -s ' \n' ' ')" = \
      " c2052c65dbc769c6 f646be29dc1e3c51 1d2e8b0e366112ea " ]
}

@test "raw stream: ChaCha20 with the all-zero key is RFC 8439 A.1 test vector 1" {
    # Key 0, nonce 0, counter 0: the same block in the original and IETF forms.
    [ "$("$RIFFLE" rng --random-source="$T/zero.key" --bytes=64 | hex)" = \
      "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586" ]
}

@test "raw stream: xoshiro256++ and PCG64 from the zero key, computed independently" {
    # rf_rng_init: the state is the first 32 bytes of ChaCha20(key, nonce 0) --
    # the RFC 8439 bytes above -- as xoshiro's four words, or as PCG64's
    # (initstate, initseq) seeded as pcg64_srandom_r.  Recomputed here in Python
    # from the authors' definitions.
    want=$(python3 - <<'PY'
import struct
b = bytes.fromhex("76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7")
M = (1 << 64) - 1
s = list(struct.unpack("<4Q", b))
rotl = lambda x, k: ((x << k) | (x >> (64 - k))) & M
out = []
for _ in range(4):
    out.append((rotl((s[0] + s[3]) & M, 23) + s[0]) & M)
    t = (s[1] << 17) & M
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t
    s[3] = rotl(s[3], 45)
x = struct.pack("<4Q", *out).hex()
W = (1 << 128) - 1
mul = (2549297995355413924 << 64) | 4865540595714422341
initstate = int.from_bytes(b[:16], "little"); initseq = int.from_bytes(b[16:], "little")
inc = ((initseq << 1) | 1) & W
st = 0
st = (st * mul + inc) & W
st = (st + initstate) & W
st = (st * mul + inc) & W
out = []
for _ in range(4):
    st = (st * mul + inc) & W
    v = ((st >> 64) ^ st) & M; r = st >> 122
    out.append(((v >> r) | (v << ((64 - r) & 63))) & M)
print(x, struct.pack("<4Q", *out).hex())
PY
)
    got="$("$RIFFLE" rng --rng=xoshiro256++ --random-source="$T/zero.key" --bytes=32 | hex) $("$RIFFLE" rng --rng=pcg64 --random-source="$T/zero.key" --bytes=32 | hex)"
    [ "$got" = "$want" ]
}

@test "--bytes gives exactly that many bytes, a prefix of the longer stream" {
    for n in 0 1 7 8 9 1000 1048575 1048576 1048577 3000001; do
        [ "$("$RIFFLE" rng --seed=5 --bytes=$n | wc -c)" -eq "$n" ]
    done
    cmp <("$RIFFLE" rng --rng=pcg64 --seed=5 --bytes=13) \
        <("$RIFFLE" rng --rng=pcg64 --seed=5 --bytes=2000000 | head -c 13)
}

@test "scaled stream: rf_below's golden draws as text" {
    # tests/unit/test_golden.c: rf_below(1000000007) after rf_rng_seed_u64(7).
    run "$RIFFLE" rng --seed=7 --below=1000000007 --count=4
    [ "$status" -eq 0 ]
    [ "$output" = "$(printf '862496479\n804799465\n742200865\n761001737')" ]
    run "$RIFFLE" rng --rng=xoshiro256++ --seed=7 --below=1000000007 -n 4
    [ "$output" = "$(printf '902762690\n465904056\n513830637\n125578041')" ]
}

@test "scaled stream: every draw in [0, N), every value seen" {
    "$RIFFLE" rng --seed=1 --below=7 --count=10000 > "$T/d"
    [ "$(wc -l < "$T/d")" -eq 10000 ]
    [ "$(sort -un "$T/d" | tr '\n' ' ')" = "0 1 2 3 4 5 6 " ]
    "$RIFFLE" rng --seed=1 --below=3 --format=u8 --bytes=5000 | od -An -v -tu1 | tr -s ' ' '\n' |
        sed '/^$/d' | sort -un > "$T/v"
    [ "$(tr '\n' ' ' < "$T/v")" = "0 1 2 " ]
}

@test "scaled stream: --below=1 is all zeros, one word per draw" {
    [ "$("$RIFFLE" rng --seed=3 --below=1 --format=u64 --bytes=800 | tr -d '\0' | wc -c)" -eq 0 ]
    [ "$("$RIFFLE" rng --seed=3 --below=1 --format=u64 --bytes=800 | wc -c)" -eq 800 ]
}

@test "scaled stream: --below=2^k is the top k bits of each raw word" {
    # rf_below is Lemire's multiply-high: for N = 2^k, floor(x * 2^k / 2^64) is
    # x >> (64 - k), and 2^64 mod 2^k = 0 rejects nothing.
    raw=$("$RIFFLE" rng --seed=9 --bytes=80 | od -An -v -tu8 | tr -s ' ' '\n' | sed '/^$/d')
    top=$(for x in $raw; do python3 -c "print($x >> 56)"; done)
    [ "$("$RIFFLE" rng --seed=9 --below=256 --count=10)" = "$top" ]
    [ "$("$RIFFLE" rng --seed=9 --below=256 --format=u8 --bytes=10 | od -An -v -tu1 | tr -s ' ' '\n' | sed '/^$/d')" = "$top" ]
    top32=$(for x in $raw; do python3 -c "print($x >> 32)"; done)
    [ "$("$RIFFLE" rng --seed=9 --below=4294967296 --format=u32 --bytes=40 | od -An -v -tu4 | tr -s ' ' '\n' | sed '/^$/d')" = "$top32" ]
}

@test "scaled stream: the formats write the same draws" {
    t=$("$RIFFLE" rng --rng=pcg64 --seed=4 --below=200 --count=50)
    [ "$("$RIFFLE" rng --rng=pcg64 --seed=4 --below=200 --format=u32 --bytes=200 | od -An -v -tu4 | tr -s ' ' '\n' | sed '/^$/d')" = "$t" ]
    [ "$("$RIFFLE" rng --rng=pcg64 --seed=4 --below=200 --format=u64 --bytes=400 | od -An -v -tu8 | tr -s ' ' '\n' | sed '/^$/d')" = "$t" ]
    [ "$("$RIFFLE" rng --rng=pcg64 --seed=4 --below=200 --format=u64 --bytes=397 | wc -c)" -eq 397 ]
}

@test "a closed pipe ends the endless stream quietly, status 0" {
    for args in "" "--below=52" "--below=52 --format=u32" "--rng=xoshiro256++"; do
        # shellcheck disable=SC2086
        run bash -c "'$RIFFLE' rng $args 2>'$T/err' | head -c 100000 > /dev/null; echo \${PIPESTATUS[0]}"
        [ "$output" = "0" ]
        [ ! -s "$T/err" ]
    done
}

@test "errors: bad bounds, counts, formats and combinations, exit 1 and no output" {
    check() { # message args...
        local want=$1; shift
        run "$RIFFLE" rng "$@"
        [ "$status" -eq 1 ]
        [[ "${lines[0]}" == "$want" ]]
        [ "${lines[1]}" = "Try 'riffle rng --help' for more information." ]
    }
    check "riffle: invalid bound '0' (at least 1)" --below=0
    check "riffle: invalid bound 'x'" --below=x
    check "riffle: invalid bound '-3'" --below=-3
    check "riffle: invalid bound '18446744073709551616'" --below=18446744073709551616
    check "riffle: invalid byte count '1k'" --bytes=1k
    check "riffle: invalid format 'hex' (text, u8, u32 or u64)" --below=5 --format=hex
    check "riffle: --format needs --below" --format=u32
    check "riffle: --count needs --below" --count=3
    check "riffle: --bytes needs a binary --format; use --count for text" --below=5 --bytes=10
    check "riffle: --bytes and --count cannot be combined" --below=5 --format=u32 --bytes=8 --count=2
    check "riffle: bound '257' does not fit the format u8" --below=257 --format=u8
    check "riffle: bound '4294967297' does not fit the format u32" --below=4294967297 --format=u32
    check "riffle: --seed and --random-source cannot be combined" --seed=1 --random-source="$T/zero.key"
    check "riffle: invalid generator 'mt' (chacha20, xoshiro256++ or pcg64)" --rng=mt
    check "riffle: extra operand 'x'" x
    run "$RIFFLE" rng --seed=1 --seed=2
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: multiple seeds specified" ]
    run "$RIFFLE" rng --random-source="$T/missing" --bytes=1
    [ "$status" -eq 1 ]
    [[ "$output" == *"riffle: "*"missing: No such file or directory" ]]
}

@test "--help describes the command" {
    run "$RIFFLE" rng --help
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "Usage: riffle rng [OPTION]..." ]]
    [[ "$output" == *"--below=N"* ]]
    run "$RIFFLE" --help
    [[ "$output" == *"gather, rng"* ]]
}

@test "production mode refuses --seed and --random-source in deal, sample, rng and the shuffle" {
    msg="is refused in production mode"
    for cmd in "deal --seed=1" "sample -n 1 --seed=1" "rng --seed=1 --bytes=8" "--seed=1 -e a b" \
               "rng --random-source=$T/zero.key" "sample -n1 --random-source=$T/zero.key" \
               "--random-source=$T/zero.key -e a b"; do
        # shellcheck disable=SC2086
        run "$RIFFLE" $cmd --production < /dev/null
        [ "$status" -eq 1 ]
        [[ "${lines[0]}" == "riffle: --"*" $msg (--production): a live stream must never repeat a prior one" ]]
        [[ "${lines[1]}" == "Try 'riffle"*"--help' for more information." ]]
        # shellcheck disable=SC2086
        RIFFLE_PRODUCTION=1 run "$RIFFLE" $cmd < /dev/null
        [ "$status" -eq 1 ]
        [[ "${lines[0]}" == *" $msg (RIFFLE_PRODUCTION): "* ]]
    done
    [ "${#lines[@]}" -eq 2 ]
}

@test "production mode without a seed deals from the operating system" {
    run "$RIFFLE" deal --production
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 4 ]
    RIFFLE_PRODUCTION=1 run "$RIFFLE" rng --bytes=16
    [ "$status" -eq 0 ]
    RIFFLE_PRODUCTION=1 run "$RIFFLE" -e a b c
    [ "$status" -eq 0 ]
    [ "$(printf '%s\n' "$output" | sort | tr '\n' ' ')" = "a b c " ]
    # "0" and "" leave it off; any other value turns it on (fails safe).
    RIFFLE_PRODUCTION=0 run "$RIFFLE" deal --seed=2026
    [ "$status" -eq 0 ]
    RIFFLE_PRODUCTION= run "$RIFFLE" deal --seed=2026
    [ "$status" -eq 0 ]
    RIFFLE_PRODUCTION=yes run "$RIFFLE" deal --seed=2026
    [ "$status" -eq 1 ]
}

@test "a write error is reported, status 1" {
    run bash -c "'$RIFFLE' rng --bytes=10 > /dev/full"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: write error: No space left on device" ]
    run bash -c "'$RIFFLE' rng --below=5 > /dev/full"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: write error: No space left on device" ]
}
