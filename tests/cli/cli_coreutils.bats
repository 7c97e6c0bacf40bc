#!/usr/bin/env bats
# The behaviours GNU coreutils' own shuf tests look at, checked for riffle
# under both of its names: `riffle` ($RIFFLE) and the `shuf` link ($BUILD/shuf),
# each case against GNU shuf (/usr/bin/shuf, run as "shuf") wherever the
# outcome is deterministic: exit status, stderr (the "riffle:" / "shuf:"
# prefix normalised), and stdout when it does not depend on randomness.
# Random outputs are checked as multisets and by counts.
#
# Where riffle differs from GNU shuf ON PURPOSE (not tested as GNU):
#  - `riffle -i LO-HI` takes any range of 64-bit numbers and streams it (a
#    range too large to hold is not refused); under the shuf name a range of
#    2^64 numbers is refused with shuf's message, as GNU does.
#  - riffle's own options (--seed, --rng, --header, subcommands) and several
#    FILE operands are accepted by `riffle` only; the shuf name refuses them
#    as GNU shuf does ("extra operand", "unrecognized option").
#  - --random-source=FILE: riffle keys its generator with the first 32 bytes
#    of FILE, so the output for a given FILE differs from GNU's, and a FILE
#    shorter than 32 bytes fails ("'FILE': end of file", GNU's message) even
#    where GNU would have needed fewer bytes (one input line, -r with few
#    draws).  With an empty FILE and -n 0 both succeed.
#  - `riffle` (its own name) names the file in read errors
#    ("riffle: FILE: Is a directory"); only the shuf name owes GNU's text.
#  - GNU 9.1 prints a second "write error" line after a failed -r write to
#    /dev/full; riffle prints the first one only (the checks use line 1).
#
# A difference from GNU that is not on purpose is a failing test.

load ../lib/bg_jobs

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    SHUF="$(dirname "$RIFFLE")/shuf"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
    GNU=/usr/bin/shuf
    HAVE_GNU=0
    if [ -x "$GNU" ] && "$GNU" --version 2> /dev/null | head -n 1 | grep -q 'GNU coreutils'; then
        HAVE_GNU=1
    fi
    UMAX=18446744073709551615
}

teardown() {
    bg_cleanup
    if [ -n "${OPEN_DIR:-}" ]; then
        chmod -R u+rwx "$OPEN_DIR" 2> /dev/null || true
        rm -rf "$OPEN_DIR"
    fi
}

# prog IMPL ARG...: run implementation IMPL (riffle | shuf | gnu); GNU shuf
# gets argv[0] "shuf" so that its messages read "shuf: ...".
prog() {
    local impl=$1
    shift
    case $impl in
    riffle) "$RIFFLE" "$@" ;;
    shuf) "$SHUF" "$@" ;;
    gnu) (exec -a shuf "$GNU" "$@") ;;
    esac
}

# outcome MODE IMPL ARG...: "rc=N", stderr with the program name made
# "shuf", and, with MODE ending in "+out", stdout.  MODE: std (stdin
# /dev/null), nostdin (<&-), nostdout (>&-), full (>/dev/full), each with an
# optional "+out".
outcome() {
    local mode=$1 impl=$2 rc=0
    shift 2
    : > "$T/.o"
    case ${mode%+out} in
    std) prog "$impl" "$@" < /dev/null > "$T/.o" 2> "$T/.e" || rc=$? ;;
    nostdin) prog "$impl" "$@" <&- > "$T/.o" 2> "$T/.e" || rc=$? ;;
    nostdout) prog "$impl" "$@" < /dev/null >&- 2> "$T/.e" || rc=$? ;;
    full) prog "$impl" "$@" < /dev/null > /dev/full 2> "$T/.e" || rc=$? ;;
    esac
    echo "rc=$rc"
    sed -e 's/^riffle: /shuf: /' -e "s/'riffle --help'/'shuf --help'/" "$T/.e"
    if [ "${mode%+out}" != "$mode" ]; then
        echo "--- stdout"
        cat "$T/.o"
    fi
}

# like_gnu MODE ARG...: both riffle names give GNU shuf's outcome.
like_gnu() {
    local mode=$1 impl want got
    shift
    [ "$HAVE_GNU" = 1 ] || return 0
    want=$(outcome "$mode" gnu "$@")
    for impl in riffle shuf; do
        got=$(outcome "$mode" "$impl" "$@")
        if [ "$want" != "$got" ]; then
            printf 'case: %s %s\n--- GNU shuf:\n%s\n--- %s:\n%s\n' "$mode" "$*" "$want" "$impl" "$got"
            return 1
        fi
    done
}

# shuf_like_gnu MODE ARG...: the shuf name alone gives GNU shuf's outcome
# (for the cases where the riffle name differs on purpose).
shuf_like_gnu() {
    local mode=$1 want got
    shift
    [ "$HAVE_GNU" = 1 ] || return 0
    want=$(outcome "$mode" gnu "$@")
    got=$(outcome "$mode" shuf "$@")
    [ "$want" = "$got" ] || {
        printf 'case: %s %s\n--- GNU shuf:\n%s\n--- shuf link:\n%s\n' "$mode" "$*" "$want" "$got"
        false
    }
}

# is_perm FILE EXPECTED: FILE's lines are a permutation of EXPECTED's.
is_perm() {
    cmp <(LC_ALL=C sort "$1") <(LC_ALL=C sort "$2")
}

@test "GNU shuf is there to compare with" {
    # every like_gnu comparison below needs it; CI (Debian 12) has coreutils
    [ "$HAVE_GNU" = 1 ]
}

@test "a file, stdin, -i and -e give permutations, not the input order" {
    seq 100 > "$T/in"
    for impl in riffle shuf; do
        prog $impl "$T/in" > "$T/out"
        is_perm "$T/out" "$T/in"
        ! cmp -s "$T/out" "$T/in"      # 1 chance in 100!
        prog $impl < "$T/in" > "$T/out"
        is_perm "$T/out" "$T/in"
        ! cmp -s "$T/out" "$T/in"
        prog $impl -i 1-100 > "$T/out"
        is_perm "$T/out" "$T/in"
        ! cmp -s "$T/out" "$T/in"
        prog $impl -e $(seq 100) > "$T/out"
        is_perm "$T/out" "$T/in"
        # 8 KiB + 1 byte of input through a pipe
        seq 1860 | prog $impl > "$T/out"
        is_perm "$T/out" <(seq 1860)
    done
}

@test "randomness does not come from address layout alone" {
    setarch -R true 2> /dev/null || skip "setarch -R not permitted here"
    for impl in riffle shuf; do
        a=$(setarch -R "$(dirname "$RIFFLE")/$impl" -i 1-$UMAX -n 1)
        b=$(setarch -R "$(dirname "$RIFFLE")/$impl" -i 1-$UMAX -n 1)
        [[ "$a" =~ ^[0-9]+$ ]] && [ "$a" != "$b" ]
    done
}

@test "-n 0: no output, no input opened or read" {
    echo x > "$T/f"
    like_gnu std+out -n 0 "$T/f"
    like_gnu std+out -n 0 "$T/missing"
    like_gnu std+out -n 0 "$T"
    like_gnu std+out -r -n 0 -i 0-9
    like_gnu std+out -n 0 -e a b
    like_gnu nostdin+out -r -n 0 "$T/f"
    like_gnu nostdin+out -n 0
    for impl in riffle shuf; do
        run prog $impl -n 0 "$T/missing"
        [ "$status" -eq 0 ] && [ -z "$output" ]
        run prog $impl -r -n 0 "$T/f" <&-
        [ "$status" -eq 0 ] && [ -z "$output" ]
        printf 'A\nB\n' | prog $impl --rep -n0 > "$T/out"
        [ ! -s "$T/out" ]
    done
}

@test "-n larger, equal and smaller than the input (batch edges)" {
    for impl in riffle shuf; do
        for in_n in 0 1 5 1023 1024 1025 3071 3072 3073; do
            seq "$in_n" > "$T/in"
            for out_n in 0 1 5 1023 1024 1025 3071 3072 3073; do
                seq "$in_n" | prog $impl -n "$out_n" -o "$T/out"
                want=$out_n
                [ "$in_n" -lt "$out_n" ] && want=$in_n
                [ "$(wc -l < "$T/out")" -eq "$want" ]
                [ "$(grep -c '^[0-9][0-9]*$' "$T/out")" -eq "$want" ]
                [ "$(sort -un "$T/out" | wc -l)" -eq "$want" ]
                # every line comes from the input
                [ -z "$(sort "$T/out" | comm -23 - <(sort "$T/in"))" ]
            done
        done
    done
}

@test "several -n: the smallest wins" {
    for impl in riffle shuf; do
        run prog $impl -n10 -i0-9 -n3 -n20
        [ "$status" -eq 0 ] && [ "${#lines[@]}" -eq 3 ]
    done
    like_gnu std -n10 -i0-9 -n3 -n20
}

@test "-i edges: 0-0, LO-LO, the empty range HI+1-HI, the top of 64 bits" {
    for r in 0-0 7-7 1-0 5-4 0-0 $UMAX-$UMAX; do
        like_gnu std+out -i "$r"
        like_gnu std+out -i "$r" -n 5
    done
    for impl in riffle shuf; do
        run prog $impl -i 0-0
        [ "$status" -eq 0 ] && [ "$output" = 0 ]
        run prog $impl -i 1-0
        [ "$status" -eq 0 ] && [ -z "$output" ]
        run prog $impl -i $UMAX-$UMAX
        [ "$output" = $UMAX ]
        prog $impl -i 222-233 > "$T/out"
        is_perm "$T/out" <(seq 222 233)
    done
}

@test "-i huge ranges with -n: prompt, K distinct numbers in range" {
    for impl in riffle shuf; do
        for r in 1-$UMAX 0-999999999999 18446744073709551000-$UMAX; do
            run timeout 10 "$(dirname "$RIFFLE")/$impl" -i "$r" -n 2
            [ "$status" -eq 0 ] && [ "${#lines[@]}" -eq 2 ]
            [ "${lines[0]}" != "${lines[1]}" ]
            lo=${r%-*}
            for v in "${lines[@]}"; do
                [[ "$v" =~ ^[0-9]+$ ]]
                # compare as decimal strings of equal length (bash is 63-bit)
                [ "${#v}" -gt "${#lo}" ] || [[ ! "$v" < "$lo" ]]
            done
        done
    done
    # 2^64 numbers: GNU refuses, and so does the shuf name ...
    shuf_like_gnu std -i 0-$UMAX -n 1
    run "$SHUF" -i 0-$UMAX -n 1
    [ "$status" -eq 1 ] && [ "$output" = "shuf: invalid input range: '0-$UMAX'" ]
    # ... riffle streams it (on purpose, see the top of the file)
    run timeout 10 "$RIFFLE" -i 0-$UMAX -n 2
    [ "$status" -eq 0 ] && [ "${#lines[@]}" -eq 2 ]
}

@test "-i invalid ranges: exit 1 and GNU's messages" {
    for r in 1 A 1- 1-A 5-3 -1-3 1-2-3 ' ' '' 1-3x 18446744073709551616-1 1-18446744073709551616; do
        like_gnu std -i "$r"
        for impl in riffle shuf; do
            run prog $impl -i "$r"
            [ "$status" -eq 1 ]
            [[ "${lines[0]}" == "$impl: invalid input range: "* ]]
        done
    done
    run "$SHUF" -i 1-A
    [ "$output" = "shuf: invalid input range: 'A'" ]
    run "$SHUF" -i 5-3
    [ "$output" = "shuf: invalid input range: '5-3'" ]
}

@test "-e: with arguments, without, with -n, -r, -z" {
    for impl in riffle shuf; do
        run prog $impl -e a b c d e
        [ "$status" -eq 0 ]
        [ "$(printf '%s\n' "${lines[@]}" | sort | paste -sd ' ')" = "a b c d e" ]
        run prog $impl -e
        [ "$status" -eq 0 ] && [ -z "$output" ]
        run prog $impl -n 2 -e a b c
        [ "${#lines[@]}" -eq 2 ]
        prog $impl -e 'x y' '' z > "$T/out"
        is_perm "$T/out" <(printf '\nx y\nz\n')
        run prog $impl -er
        [ "$status" -eq 1 ] && [ "$output" = "$impl: no lines to repeat" ]
    done
    like_gnu std+out -e
    like_gnu std+out -e only
    like_gnu std -er
    like_gnu std+out -n 0 -e a b
}

@test "-z: NUL terminators in and out" {
    for impl in riffle shuf; do
        prog $impl --zero-terminated -i 1-1 > "$T/out"
        cmp "$T/out" <(printf '1\0')
        prog $impl -z -e x > "$T/out"
        cmp "$T/out" <(printf 'x\0')
        printf 'a\nb\0c\0d' | prog $impl -z > "$T/out"
        cmp <(sort -z "$T/out") <(printf 'a\nb\0c\0d\0' | sort -z)
    done
    like_gnu std+out -z -i 1-1
    like_gnu std+out -z -e x
    like_gnu std+out -z -n 0 -i 1-9
}

@test "-r -n K: K lines, every value drawn" {
    for impl in riffle shuf; do
        prog $impl --rep -i0-9 -n1000 > "$T/out"
        [ "$(wc -l < "$T/out")" -eq 1000 ]
        [ "$(sort -nu "$T/out" | paste -sd ' ')" = "0 1 2 3 4 5 6 7 8 9" ]
        prog $impl --rep -i222-233 -n2000 > "$T/out"
        [ "$(sort -nu "$T/out" | paste -sd ' ')" = "$(seq 222 233 | paste -sd ' ')" ]
        printf 'A\nB\nC\nD\nE\n' | prog $impl --rep -n2000 > "$T/out"
        [ "$(wc -l < "$T/out")" -eq 2000 ]
        [ "$(sort -u "$T/out" | paste -sd ' ')" = "A B C D E" ]
        prog $impl -r -n 3 -e only > "$T/out"
        cmp "$T/out" <(printf 'only\nonly\nonly\n')
    done
    like_gnu std+out -r -n 4 -e only
    like_gnu std+out -r -n 3 -i 5-5
    like_gnu std -r /dev/null
    like_gnu std -r -i 1-0
}

@test "-r without -n on a small input: endless until head closes the pipe" {
    for impl in riffle shuf; do
        for src in "-i 0-10" "-e A B C D"; do
            # bounded: a run that ignored the closed pipe is killed by timeout
            run bash -c 'timeout 20 "$0" --rep $1 2> "$2/err" | head -n 1000 | wc -l; echo "${PIPESTATUS[0]}"' \
                "$(dirname "$RIFFLE")/$impl" "$src" "$T"
            [ "${lines[0]}" -eq 1000 ]
            [ "${lines[1]}" -eq 141 ]    # SIGPIPE, as GNU
            [ ! -s "$T/err" ]
        done
        run bash -c 'printf "A\nB\nC\n" | timeout 20 "$0" -r | head -n 1000 | wc -l; echo "${PIPESTATUS[1]}"' \
            "$(dirname "$RIFFLE")/$impl"
        [ "${lines[0]}" -eq 1000 ] && [ "${lines[1]}" -eq 141 ]
    done
}

@test "-o FILE: the output goes to FILE, nothing to stdout" {
    seq 50 > "$T/in"
    for impl in riffle shuf; do
        echo old > "$T/out"
        run prog $impl -o "$T/out" "$T/in"
        [ "$status" -eq 0 ] && [ -z "$output" ]
        is_perm "$T/out" "$T/in"
        prog $impl -n 0 -o "$T/empty" -e a
        [ -f "$T/empty" ] && [ ! -s "$T/empty" ]
        run prog $impl -o "$T/no/dir/out" -e a
        [ "$status" -eq 1 ] && [ "$output" = "$impl: $T/no/dir/out: No such file or directory" ]
    done
    like_gnu std -o "$T/no/dir/out" -e a
    like_gnu std -i0-9 -o "$T/A" -o "$T/B"
    like_gnu std+out -e a -o /dev/null
}

@test "a directory as input: read error, exit 1 (riffle's own name)" {
    # the riffle name reports "riffle: FILE: reason" (on purpose)
    for args in "$T" "-n1 $T" "-r $T"; do
        run "$RIFFLE" $args
        [ "$status" -eq 1 ] && [ "$output" = "riffle: $T: Is a directory" ]
    done
    run "$RIFFLE" < "$T"
    [ "$status" -eq 1 ] && [[ "$output" == *"Is a directory" ]]
}

@test "read errors under the shuf name: GNU's 'read error' message" {
    if [ -r /proc/self/mem ]; then
        shuf_like_gnu std+out /proc/self/mem
        run "$SHUF" -n 1 /proc/self/mem
        [ "$status" -eq 1 ] && [ "$output" = "shuf: read error: Input/output error" ]
    fi
    for args in "$T" "-n1 $T" "-r $T"; do
        shuf_like_gnu std+out $args
        run "$SHUF" $args
        [ "$status" -eq 1 ] && [ "$output" = "shuf: read error: Is a directory" ]
    done
    run "$SHUF" < "$T"
    [ "$status" -eq 1 ] && [ "$output" = "shuf: read error: Is a directory" ]
}

@test "an input that fails to read (EIO): exit 1, a message, no output" {
    [ -r /proc/self/mem ] || skip "no /proc/self/mem"
    for impl in riffle shuf; do
        for args in "/proc/self/mem" "-n 1 /proc/self/mem" "-r -n 1 /proc/self/mem"; do
            run prog $impl $args
            [ "$status" -eq 1 ]
            [[ "$output" == "$impl: "*"Input/output error" ]]
        done
    done
}

@test "an unreadable input: Permission denied, exit 1; -n 0 does not open it" {
    # root reads any file: drop to nobody for the check
    OPEN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/riffle-cu.XXXXXX")
    chmod 755 "$OPEN_DIR"
    cp "$RIFFLE" "$OPEN_DIR/riffle"
    ln -s riffle "$OPEN_DIR/shuf"
    echo secret > "$OPEN_DIR/locked"
    chmod 000 "$OPEN_DIR/locked"
    as_user=()
    if [ "$(id -u)" -eq 0 ]; then
        as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    fi
    "${as_user[@]}" test -x "$OPEN_DIR/riffle" || skip "user nobody cannot reach $OPEN_DIR"
    "${as_user[@]}" test ! -r "$OPEN_DIR/locked"
    for impl in riffle shuf; do
        run "${as_user[@]}" "$OPEN_DIR/$impl" "$OPEN_DIR/locked"
        [ "$status" -eq 1 ] && [ "$output" = "$impl: $OPEN_DIR/locked: Permission denied" ]
        run "${as_user[@]}" "$OPEN_DIR/$impl" -n1 "$OPEN_DIR/locked"
        [ "$status" -eq 1 ]
        run "${as_user[@]}" "$OPEN_DIR/$impl" -n0 "$OPEN_DIR/locked"
        [ "$status" -eq 0 ] && [ -z "$output" ]
    done
    if [ "$HAVE_GNU" = 1 ]; then
        run "${as_user[@]}" bash -c 'exec -a shuf "$0" "$1"' "$GNU" "$OPEN_DIR/locked"
        [ "$status" -eq 1 ] && [ "$output" = "shuf: $OPEN_DIR/locked: Permission denied" ]
    fi
}

@test "a missing input: No such file or directory, exit 1" {
    for impl in riffle shuf; do
        run prog $impl "$T/missing"
        [ "$status" -eq 1 ] && [ "$output" = "$impl: $T/missing: No such file or directory" ]
    done
    like_gnu std+out "$T/missing"
    like_gnu std+out -r "$T/missing"
}

@test "too many operands: usage error under the shuf name" {
    echo x > "$T/a"; echo y > "$T/b"
    run "$SHUF" "$T/a" "$T/b"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "shuf: extra operand '$T/b'" ]
    [ "${lines[1]}" = "Try 'shuf --help' for more information." ]
    # an operand with -i is extra for both names (and must not crash)
    for impl in riffle shuf; do
        run prog $impl -i0-0 1
        [ "$status" -eq 1 ] && [ "${lines[0]}" = "$impl: extra operand '1'" ]
    done
    like_gnu std -i0-0 1
    like_gnu std -i 1-3 -
    shuf_like_gnu std "$T/a" "$T/b"
    # riffle's own name reads several FILEs as one input (on purpose)
    run "$RIFFLE" "$T/a" "$T/b"
    [ "$status" -eq 0 ] && [ "$(printf '%s\n' "${lines[@]}" | sort | paste -sd ' ')" = "x y" ]
}

@test "conflicting and repeated options: exit 1 and GNU's messages" {
    for impl in riffle shuf; do
        run prog $impl -i0-9 -e A B
        [ "$status" -eq 1 ] && [ "${lines[0]}" = "$impl: cannot combine -e and -i options" ]
        run prog $impl -i0-9 -n10 -i8-90
        [ "$status" -eq 1 ] && [ "$output" = "$impl: multiple -i options specified" ]
        run prog $impl -nA
        [ "$status" -eq 1 ] && [ "$output" = "$impl: invalid line count: 'A'" ]
    done
    like_gnu std -i0-9 -e A B
    like_gnu std -e A -i0-9
    like_gnu std -i0-9 -n10 -i8-90
    like_gnu std -i1-2 -i1-2
    like_gnu std -nA
    like_gnu std -n -1 -e a
    like_gnu std -i0-9 -o "$T/A" -o "$T/B"
    like_gnu std -i0-9 --random-source "$T/A" --random-source "$T/B"
}

@test "--random-source: empty and short files, a missing file" {
    : > "$T/empty"
    printf 'ab' > "$T/short"
    for impl in riffle shuf; do
        run prog $impl --random-source="$T/empty" -i 1-5
        [ "$status" -eq 1 ] && [ "$output" = "$impl: '$T/empty': end of file" ]
        run prog $impl --random-source="$T/empty" -n 0 -i 1-5
        [ "$status" -eq 0 ] && [ -z "$output" ]
    done
    like_gnu std+out --random-source="$T/empty" -i 1-5
    like_gnu std+out --random-source="$T/empty" -e a b c
    like_gnu std+out --random-source="$T/short" -i 1-100
    like_gnu std+out --random-source="$T/empty" -n 0 -i 1-5
    like_gnu std+out --random-source="$T/missing" -i 1-5
}

@test "--random-source: a fixed file gives one output per implementation" {
    head -c 4096 /dev/urandom > "$T/src"
    seq 200 > "$T/in"
    for impl in riffle shuf; do
        prog $impl --random-source="$T/src" "$T/in" > "$T/a"
        prog $impl --random-source="$T/src" "$T/in" > "$T/b"
        cmp "$T/a" "$T/b"
        is_perm "$T/a" "$T/in"
        prog $impl --random-source="$T/src" -i 1-200 -n 10 > "$T/a"
        prog $impl --random-source="$T/src" -i 1-200 -n 10 > "$T/b"
        cmp "$T/a" "$T/b"
        [ "$(sort -u "$T/a" | wc -l)" -eq 10 ]
        prog $impl --random-source="$T/src" -r -n 50 -e x y > "$T/a"
        prog $impl --random-source="$T/src" -r -n 50 -e x y > "$T/b"
        cmp "$T/a" "$T/b"
    done
    # both names share one mapping
    cmp <("$RIFFLE" --random-source="$T/src" "$T/in") <("$SHUF" --random-source="$T/src" "$T/in")
}

@test "writing to a full device: write error, exit 1, promptly" {
    for impl in riffle shuf; do
        run bash -c '"$0" -i 1-3 > /dev/full' "$(dirname "$RIFFLE")/$impl"
        [ "$status" -eq 1 ] && [ "$output" = "$impl: write error: No space left on device" ]
        run prog $impl -i 1-3 -o /dev/full
        [ "$status" -eq 1 ] && [ "$output" = "$impl: write error: No space left on device" ]
        # endless -r must stop at the first failed write
        run bash -c 'timeout 10 "$0" -r -i 1-3 > /dev/full' "$(dirname "$RIFFLE")/$impl"
        [ "$status" -eq 1 ] && [ "${lines[0]}" = "$impl: write error: No space left on device" ]
        # no output, nothing written: success
        run bash -c '"$0" -e > /dev/full' "$(dirname "$RIFFLE")/$impl"
        [ "$status" -eq 0 ]
    done
    like_gnu full -i 1-3
    like_gnu full -e a b
    like_gnu full -n 0 -i 1-5
    like_gnu full -e
    like_gnu std -i 1-3 -o /dev/full
}

@test "a closed stdout: write error, exit 1 (nothing to write: exit 0)" {
    for impl in riffle shuf; do
        run bash -c '"$0" -e a b >&-' "$(dirname "$RIFFLE")/$impl"
        [ "$status" -eq 1 ] && [ "$output" = "$impl: write error: Bad file descriptor" ]
        run bash -c '"$0" -n 0 -i 1-3 >&-' "$(dirname "$RIFFLE")/$impl"
        [ "$status" -eq 0 ] && [ -z "$output" ]
    done
    like_gnu nostdout -e a b
    like_gnu nostdout -i 1-3
    like_gnu nostdout -r -n 3 -e a
    like_gnu nostdout -n 0 -i 1-3
    like_gnu nostdout -e
}

@test "a closed stdin that is not needed: normal run" {
    seq 5 > "$T/f"
    for impl in riffle shuf; do
        prog $impl /dev/null <&- > "$T/out"
        [ ! -s "$T/out" ]
        prog $impl "$T/f" <&- > "$T/out"
        is_perm "$T/out" "$T/f"
        prog $impl -e a b <&- > "$T/out"
        is_perm "$T/out" <(printf 'a\nb\n')
        prog $impl -i 1-5 <&- > "$T/out"
        is_perm "$T/out" "$T/f"
        # an output file opened while fd 0 is free must not be mistaken for it
        prog $impl "$T/f" -o "$T/o" <&-
        is_perm "$T/o" "$T/f"
        prog $impl -e a b -o "$T/o" <&-
        is_perm "$T/o" <(printf 'a\nb\n')
    done
    like_gnu nostdin+out /dev/null
    like_gnu nostdin+out -n 0
    like_gnu nostdin+out -r -n 0 "$T/f"
}

@test "a closed stdin that is needed: exit 1 with a message" {
    for impl in riffle shuf; do
        for args in "" "-n 1" "-r -n 1" "-"; do
            # not `run ... <&-`: its command substitution would be fd 0
            out=$(outcome nostdin+out $impl $args)
            [ "$(head -n 1 <<< "$out")" = rc=1 ]
            [[ "$(sed -n 2p <<< "$out")" == "shuf: "*"Bad file descriptor" ]]
            [ "$(sed -n 3,\$p <<< "$out")" = "--- stdout" ]
        done
    done
}

@test "a closed stdin that is needed, under the shuf name: GNU's message" {
    shuf_like_gnu nostdin+out
    shuf_like_gnu nostdin+out -n 1
    out=$(outcome nostdin shuf)
    [ "$out" = "$(printf 'rc=1\nshuf: read error: Bad file descriptor')" ]
}

@test "a closed stdin that is needed, with -o FILE: exit 1, FILE untouched" {
    for impl in riffle shuf; do
        seq 300 > "$T/o"
        out=$(outcome nostdin $impl -o "$T/o")
        [ "$(head -n 1 <<< "$out")" = rc=1 ]
        [[ "$(sed -n 2p <<< "$out")" == "shuf: "*"Bad file descriptor" ]]
        cmp "$T/o" <(seq 300)
        [ -z "$(ls -A "$T" | grep '^\.riffle-' || true)" ]
    done
    shuf_like_gnu nostdin -o "$T/o"   # the riffle name says "riffle: -: ..." on purpose
}

@test "memory exhausted: exit 1 with a message, no crash" {
    # a sanitizer build reserves terabytes of address space at start
    ! grep -q __asan_init "$RIFFLE" || skip "sanitizer build: ulimit -v does not apply"
    for impl in riffle shuf; do
        run bash -c 'ulimit -v 8192 && exec "$0" -i1-1000000' "$(dirname "$RIFFLE")/$impl"
        [ "$status" -eq 1 ] && [ "$output" = "$impl: memory exhausted" ]
        run bash -c 'ulimit -v 8192 && seq 1000000 | "$0" > /dev/null' "$(dirname "$RIFFLE")/$impl"
        [ "$status" -eq 1 ] && [ -n "$output" ]
    done
    if [ "$HAVE_GNU" = 1 ]; then
        run bash -c 'ulimit -v 8192 && exec -a shuf "$0" -i1-1000000' "$GNU"
        [ "$status" -eq 1 ] && [ "$output" = "shuf: memory exhausted" ]
    fi
}

@test "getrandom failing with ENOSYS: exit 0 with a permutation, or 1 with a message" {
    command -v strace > /dev/null || skip "strace not installed (scripts/deps.sh installs it)"
    # LeakSanitizer cannot run under ptrace (a sanitizer build's exit check)
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
    for impl in riffle shuf; do
        rc=0
        strace -o /dev/null -e inject=getrandom:error=ENOSYS \
            "$(dirname "$RIFFLE")/$impl" -i 1-9 > "$T/out" 2> "$T/err" || rc=$?
        if [ "$rc" -eq 0 ]; then
            is_perm "$T/out" <(seq 9)
        else
            [ "$rc" -eq 1 ] && [ -s "$T/err" ] && [ ! -s "$T/out" ]
        fi
    done
}
