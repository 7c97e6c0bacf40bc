#!/usr/bin/env bats
# riffle perm: the keyed random-access permutation of [0, N) from the command
# line -- bijection and inverse over whole small domains in every mode, huge
# domains up to 2^64 by spot checks, the seed rule, and every error path.

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
}

flat() { tr '\n' ' ' | sed 's/ $//'; }

# p(0..N-1) sorted must be 0..N-1, and p^-1(p(i)) must be i, for N and mode.
bijection() {
    local n=$1; shift
    seq 0 $((n - 1)) > "$T/idx"
    "$RIFFLE" perm --size "$n" --seed=7 "$@" < "$T/idx" > "$T/p"
    [ "$(wc -l < "$T/p")" -eq "$n" ]
    sort -n "$T/p" | cmp - "$T/idx"
    "$RIFFLE" perm --size "$n" --seed=7 --inverse "$@" < "$T/p" | cmp - "$T/idx"
    # and, on a large enough domain, not the identity (which would mean the
    # key or the evaluation is ignored; chance 1/N! otherwise)
    [ "$n" -lt 100 ] || ! cmp -s "$T/p" "$T/idx"
}

@test "--help describes the command and exits 0" {
    run "$RIFFLE" perm --help
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "Usage: riffle perm --size=N"* ]]
    [[ "$output" == *"--inverse"* && "$output" == *"--mode=MODE"* ]]
}

@test "bijection and inverse over [0, N): auto (table) mode" {
    bijection 1000
    bijection 1
    run "$RIFFLE" perm --size 1 0
    [ "$output" = 0 ]
}

@test "bijection and inverse over [0, N): siphash and multiply forced on small N" {
    for n in 255 256 257 1000; do
        bijection $n --mode=siphash
        bijection $n --mode=multiply
    done
    bijection 2 --mode=siphash
}

@test "the table mode is a seeded permutation of the whole range" {
    for seed in 1 42 hello; do
        "$RIFFLE" perm --size 100 --seed=$seed $(seq 0 99) > "$BATS_TEST_TMPDIR/p"
        [ "$(sort -n "$BATS_TEST_TMPDIR/p" | flat)" = "$(seq 0 99 | flat)" ]
        ! cmp -s "$BATS_TEST_TMPDIR/p" <(seq 0 99)
        cmp "$BATS_TEST_TMPDIR/p" <("$RIFFLE" perm --size 100 --seed=$seed $(seq 0 99))
    done
}

@test "indices from arguments and from standard input agree" {
    a=$("$RIFFLE" perm --size 1000000000 --seed=x 5 17 999999999 0 | flat)
    b=$(printf '5 17\n999999999\n\n 0\n' | "$RIFFLE" perm --size 1000000000 --seed=x | flat)
    [ "$a" = "$b" ]
    [ "$(echo "$a" | wc -w)" -eq 4 ]
}

@test "seeded: reproducible; another seed, mode or size gives another p" {
    a=$("$RIFFLE" perm --size 1000000 --seed=3 $(seq 0 19) | flat)
    [ "$a" = "$("$RIFFLE" perm --size 1000000 --seed=3 $(seq 0 19) | flat)" ]
    [ "$a" != "$("$RIFFLE" perm --size 1000000 --seed=4 $(seq 0 19) | flat)" ]
    [ "$a" != "$("$RIFFLE" perm --size 1000000 --seed=3 --mode=siphash $(seq 0 19) | flat)" ]
    [ "$a" != "$("$RIFFLE" perm --size 1000001 --seed=3 $(seq 0 19) | flat)" ]
    # integer seed 7 and string seed x7 are different keys; 007 is 7
    [ "$("$RIFFLE" perm --size 99999999 --seed=007 1 2 3 | flat)" = \
      "$("$RIFFLE" perm --size 99999999 --seed=7 1 2 3 | flat)" ]
}

@test "golden: seeded cipher values are pinned (key rule and network)" {
    [ "$("$RIFFLE" perm --size 18446744073709551616 --seed=1 0 18446744073709551615 | flat)" = \
      "890583628705677739 5000291240398796329" ]
    [ "$("$RIFFLE" perm --size 1000000000000 --seed=3 --mode=multiply 5 | flat)" = \
      "416245844603" ]
}

@test "huge N: 2^64, 2^64-59 and 10^12, values in range and inverse round trips" {
    for n in 18446744073709551616 18446744073709551557 1000000000000 4294967297; do
        idx="0 1 2 3 1000 123456789 4294967296"
        [ "$n" = 1000000000000 ] || [ "$n" = 4294967297 ] || \
            idx="$idx 18446744073709551556"
        [ "$n" = 18446744073709551616 ] && idx="$idx 18446744073709551615"
        out=$("$RIFFLE" perm --size $n --seed=9 $idx | flat)
        [ "$(echo "$out" | wc -w)" -eq "$(echo "$idx" | wc -w)" ]
        # distinct images of distinct indices
        [ "$(echo "$out" | tr ' ' '\n' | sort -u | wc -l)" -eq "$(echo "$idx" | wc -w)" ]
        # every image is an index the command accepts (so it is below N)
        [ "$("$RIFFLE" perm --size $n --seed=9 --inverse $out | flat)" = "$idx" ]
    done
}

@test "without --seed: a permutation keyed by the OS, still a bijection" {
    seq 0 99 > "$T/idx"
    "$RIFFLE" perm --size 100 < "$T/idx" | sort -n | cmp - "$T/idx"
}

@test "a size of 2^64 is accepted with a plus sign, blanks and leading zeros" {
    run "$RIFFLE" perm --size ' +018446744073709551616' --seed=1 0
    [ "$status" -eq 0 ]
    [ "$output" = 890583628705677739 ]
}

@test "errors: size" {
    run "$RIFFLE" perm 3
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: missing --size=N" ]
    [ "${lines[1]}" = "Try 'riffle perm --help' for more information." ]
    run "$RIFFLE" perm --size 0 1
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: invalid size '0': at least 1" ]
    run "$RIFFLE" perm --size 18446744073709551617 1
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: invalid size '18446744073709551617': at most 18446744073709551616" ]
    run "$RIFFLE" perm --size 99999999999999999999999 1
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: invalid size '99999999999999999999999': at most 18446744073709551616" ]
    run "$RIFFLE" perm --size=-5 1
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: invalid size '-5'" ]
    [ "${lines[1]}" = "Try 'riffle perm --help' for more information." ]
    run "$RIFFLE" perm --size 10x 1
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: invalid size '10x'" ]
}

@test "errors: indices out of range or not numbers; output before stays" {
    run "$RIFFLE" perm --size 10 --seed=1 3 10 4
    [ "$status" -eq 1 ]
    [ "${#lines[@]}" -eq 2 ]
    [ "${lines[1]}" = "riffle: index '10' is out of range for size 10" ]
    run "$RIFFLE" perm --size 18446744073709551616 18446744073709551616
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: index '18446744073709551616' is out of range for size 18446744073709551616" ]
    run "$RIFFLE" perm --size 10 x
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: invalid index 'x'" ]
    run "$RIFFLE" perm --size 10 -- -1
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: invalid index '-1'" ]
    run bash -c "printf '1\n2\nzz\n3\n' | '$RIFFLE' perm --size 10"
    [ "$status" -eq 1 ]
    [ "${#lines[@]}" -eq 3 ]
    [ "${lines[2]}" = "riffle: -:3:1: invalid index 'zz'" ]
}

@test "errors: mode, table size, unknown option" {
    run "$RIFFLE" perm --size 10 --mode=fast 1
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: invalid mode 'fast' (auto, table, siphash or multiply)" ]
    [ "${lines[1]}" = "Try 'riffle perm --help' for more information." ]
    run "$RIFFLE" perm --size 4294967297 --mode=table 1
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: --mode=table needs a size of at most 4294967296" ]
    run "$RIFFLE" perm --size 10 --frobnicate 1
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle perm: unrecognized option '--frobnicate'" ]
    [ "${lines[1]}" = "Try 'riffle perm --help' for more information." ]
}

@test "an empty standard input prints nothing and succeeds" {
    run "$RIFFLE" perm --size 10 < /dev/null
    [ "$status" -eq 0 ]
    [ -z "$output" ]
}

@test "write errors are reported" {
    [ -w /dev/full ] || skip "no /dev/full"
    run bash -c "'$RIFFLE' perm --size 10 1 > /dev/full"
    [ "$status" -eq 1 ]
    [[ "$output" == "riffle: write error: "* ]]
}
