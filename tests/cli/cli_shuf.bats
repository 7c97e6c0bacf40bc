#!/usr/bin/env bats
# riffle as a drop-in GNU shuf: every option, behaviour and error path, with
# shuf's messages (coreutils 9.x, C locale) and exit statuses.  Outputs are
# random, so they are checked as multisets: sort(output) == sort(input).

load ../lib/bg_jobs

teardown() {
    bg_cleanup
}

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    SHUF="$(dirname "$RIFFLE")/shuf"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
}

# sorted records of a file, NUL-safe: sorted_z FILE (records end in NUL)
sorted_lines() { LC_ALL=C sort "$1"; }
sorted_z() { LC_ALL=C sort -z "$1"; }

@test "output is a permutation of the input (multiset)" {
    seq 1000 > "$T/in"
    "$RIFFLE" "$T/in" > "$T/out"
    cmp <(sorted_lines "$T/in") <(sorted_lines "$T/out")
}

@test "a last line without a newline is output with one" {
    printf 'a\nb\nc' > "$T/in"
    "$RIFFLE" "$T/in" > "$T/out"
    [ "$(wc -l < "$T/out")" -eq 3 ]
    cmp <(printf 'a\nb\nc\n') <(sorted_lines "$T/out")
}

@test "empty input gives empty output" {
    : > "$T/empty"
    run "$RIFFLE" "$T/empty"
    [ "$status" -eq 0 ] && [ -z "$output" ]
    run "$RIFFLE" < /dev/null
    [ "$status" -eq 0 ] && [ -z "$output" ]
}

@test "-z: NUL-terminated records, newlines inside, unterminated last" {
    printf 'a\nb\0c\0\0d d' > "$T/in"
    "$RIFFLE" -z "$T/in" > "$T/out"
    cmp <(printf 'a\nb\0c\0\0d d\0' | sort -z) <(sorted_z "$T/out")
    "$RIFFLE" --zero-terminated < "$T/in" > "$T/out2"
    cmp <(sorted_z "$T/out") <(sorted_z "$T/out2")
}

@test "binary bytes inside lines (NUL, CR, 0x80-0xff) survive" {
    # 256 lines of 4 bytes each: b, 7b mod 256, NUL, 255-b (a newline becomes x)
    for b in $(seq 0 255); do
        for v in "$b" $(( (b * 7) % 256 )) 0 $((255 - b)); do
            [ "$v" -eq 10 ] && v=120
            printf "\\$(printf %03o "$v")"
        done
        printf '\n'
    done > "$T/in"
    [ "$(wc -l < "$T/in")" -eq 256 ] && [ "$(wc -c < "$T/in")" -eq 1280 ]
    "$RIFFLE" "$T/in" > "$T/out"
    cmp <(sorted_lines "$T/in") <(sorted_lines "$T/out")
    "$RIFFLE" < "$T/in" > "$T/out2"
    cmp <(sorted_lines "$T/in") <(sorted_lines "$T/out2")
}

@test "a multi-megabyte line is output whole" {
    { seq 5; head -c 3000000 /dev/zero | tr '\0' 'x'; echo; seq 6 9; } > "$T/in"
    "$RIFFLE" "$T/in" > "$T/out"
    cmp <(sorted_lines "$T/in") <(sorted_lines "$T/out")
    cat "$T/in" | "$RIFFLE" > "$T/out2"
    cmp <(sorted_lines "$T/in") <(sorted_lines "$T/out2")
}

@test "standard input: no FILE and '-'" {
    seq 100 > "$T/in"
    "$RIFFLE" < "$T/in" > "$T/a"
    "$RIFFLE" - < "$T/in" > "$T/b"
    cat "$T/in" | "$RIFFLE" - > "$T/c"
    for f in a b c; do cmp <(sorted_lines "$T/in") <(sorted_lines "$T/$f"); done
}

@test "-n K outputs K distinct input lines" {
    seq 100 > "$T/in"
    "$RIFFLE" -n 7 "$T/in" > "$T/out"
    [ "$(wc -l < "$T/out")" -eq 7 ]
    [ "$(sort -u "$T/out" | wc -l)" -eq 7 ]
    [ -z "$(comm -23 <(sort "$T/out") <(sort "$T/in"))" ]
    run "$RIFFLE" --head-count=3 -e a b c d
    [ "${#lines[@]}" -eq 3 ]
}

@test "-n larger than the input outputs all" {
    seq 10 > "$T/in"
    "$RIFFLE" -n 1000 "$T/in" > "$T/out"
    cmp <(sorted_lines "$T/in") <(sorted_lines "$T/out")
    "$RIFFLE" -n 99999999999999999999999 "$T/in" > "$T/out"
    cmp <(sorted_lines "$T/in") <(sorted_lines "$T/out")
}

@test "-n 0 outputs nothing and reads nothing" {
    run "$RIFFLE" -n 0 "$T/does-not-exist"
    [ "$status" -eq 0 ] && [ -z "$output" ]
    run "$RIFFLE" -n 0 -r
    [ "$status" -eq 0 ] && [ -z "$output" ]
    run "$RIFFLE" -n 0 --random-source=/dev/null -e a b
    [ "$status" -eq 0 ] && [ -z "$output" ]
}

@test "-n 0 -o FILE still creates an empty FILE (as shuf)" {
    echo old > "$T/out"
    "$RIFFLE" -n 0 -e a -o "$T/out"
    [ -f "$T/out" ] && [ ! -s "$T/out" ]
}

@test "repeated -n: the smallest wins" {
    run "$RIFFLE" -e a b c d e -n 4 -n 2 -n 3
    [ "$status" -eq 0 ] && [ "${#lines[@]}" -eq 2 ]
}

@test "-n: shuf's accepted spellings (+N, leading blanks, leading zeros)" {
    run "$RIFFLE" -n +2 -i 1-9
    [ "${#lines[@]}" -eq 2 ]
    run "$RIFFLE" -n ' 3' -i 1-9
    [ "${#lines[@]}" -eq 3 ]
    run "$RIFFLE" -n 010 -i 1-30
    [ "${#lines[@]}" -eq 10 ]
}

@test "invalid line counts" {
    for c in x -1 3k 0x10 '' '3 ' 1e3 -0; do
        run "$RIFFLE" -n "$c" -i 1-3
        [ "$status" -eq 1 ]
        [ "$output" = "riffle: invalid line count: '$c'" ]
    done
}

@test "-r -n K outputs K lines drawn from the input" {
    run "$RIFFLE" -r -n 50 -e a b c
    [ "$status" -eq 0 ] && [ "${#lines[@]}" -eq 50 ]
    [ -z "$(printf '%s\n' "${lines[@]}" | grep -vx '[abc]')" ]
    run "$RIFFLE" --repeat -n 5 -e only
    [ "$output" = "$(printf 'only\nonly\nonly\nonly\nonly')" ]
}

@test "-r without -n repeats until the reader closes the pipe (quietly)" {
    run bash -c '"$0" -r -i 1-3 2>"$1/err" | head -n 5000 | wc -l; echo "${PIPESTATUS[0]}"' "$RIFFLE" "$T"
    [ "${lines[0]}" -eq 5000 ]
    [ "${lines[1]}" -eq 141 ]   # killed by SIGPIPE, as shuf
    [ ! -s "$T/err" ]
}

@test "EPIPE with SIGPIPE ignored ends with status 1 and shuf's message" {
    run bash -c 'trap "" PIPE; seq 100000 > "$1/in"; "$0" -r -n 50000000 "$1/in" 2>"$1/err" | head -n 1 >/dev/null; echo "${PIPESTATUS[0]}"' "$RIFFLE" "$T"
    [ "$output" -eq 1 ]
    [ "$(cat "$T/err")" = "riffle: write error: Broken pipe" ]
}

@test "-r with empty input is an error" {
    for args in "-r /dev/null" "-r -e" "-r -i 1-0"; do
        run "$RIFFLE" $args
        [ "$status" -eq 1 ]
        [ "$output" = "riffle: no lines to repeat" ]
    done
}

@test "-e: arguments are the lines; none is empty output" {
    "$RIFFLE" -e 'a b' c '' d > "$T/out"
    cmp <(printf '\na b\nc\nd\n') <(sorted_lines "$T/out")
    run "$RIFFLE" -e
    [ "$status" -eq 0 ] && [ -z "$output" ]
    "$RIFFLE" -z --echo x y > "$T/out"
    cmp <(printf 'x\0y\0') <(sorted_z "$T/out")
}

@test "-i LO-HI: the numbers LO..HI" {
    "$RIFFLE" -i 5-104 > "$T/out"
    cmp <(seq 5 104 | sort) <(sorted_lines "$T/out")
    run "$RIFFLE" -i 0-0
    [ "$output" = 0 ]
    run "$RIFFLE" --input-range=18446744073709551615-18446744073709551615
    [ "$output" = 18446744073709551615 ]
    run "$RIFFLE" -i ' 1-+3'
    [ "$(printf '%s\n' "${lines[@]}" | sort | tr '\n' ' ')" = "1 2 3 " ]
}

@test "-i with LO = HI + 1 is empty" {
    run "$RIFFLE" -i 3-2
    [ "$status" -eq 0 ] && [ -z "$output" ]
}

@test "invalid input ranges: shuf's messages" {
    check() { run "$RIFFLE" -i "$1"; [ "$status" -eq 1 ] && [ "$output" = "riffle: invalid input range: $2" ]; }
    check 5-3 "'5-3'"
    check 1-x "'x'"
    check x "'x'"
    check x-3 "'x'"
    check 1 "'1'"
    check -1-3 "''"
    check 1- "''"
    check 1--3 "'-3'"
    check 2-3-4 "'3-4'"
    check 1-3x "'3x'"
    check '' "''"
    check 1-18446744073709551616 "'18446744073709551616': Value too large for defined data type"
    check 18446744073709551616-1 "'18446744073709551616': Value too large for defined data type"
}

@test "-i over 2^20 numbers: streamed, any 64-bit range" {
    # 10^12 numbers could never be held (8 TB): -n K evaluates K of them
    run "$RIFFLE" -i 0-999999999999 -n 5 --seed=1
    [ "$status" -eq 0 ] && [ "${#lines[@]}" -eq 5 ]
    [ "$(printf '%s\n' "${lines[@]}" | sort -u | wc -l)" -eq 5 ]
    for v in "${lines[@]}"; do [[ "$v" =~ ^[0-9]+$ ]] && [ "$v" -le 999999999999 ]; done
    # all 2^64 numbers (shuf refuses this range: see the shuf-mode test)
    run "$RIFFLE" -i 0-18446744073709551615 -n 3
    [ "$status" -eq 0 ] && [ "${#lines[@]}" -eq 3 ]
    [ "$(printf '%s\n' "${lines[@]}" | sort -u | wc -l)" -eq 3 ]
    run "$RIFFLE" -i 18446744073709551000-18446744073709551615 -n 2
    [ "$status" -eq 0 ] && [ "${#lines[@]}" -eq 2 ]
    # -r needs no memory for the range either, up to the full 2^64
    for r in 1-18446744073709551615 0-18446744073709551615; do
        run "$RIFFLE" -r -n 3 -i "$r"
        [ "$status" -eq 0 ] && [ "${#lines[@]}" -eq 3 ]
    done
}

@test "-i over 2^20 numbers: every number exactly once" {
    # 2^20 + 5: just past the in-memory shuffle
    "$RIFFLE" -i 1-1048581 --seed=3 > "$T/out"
    [ "$(wc -l < "$T/out")" -eq 1048581 ]
    [ "$(sort -n "$T/out" | uniq | wc -l)" -eq 1048581 ]
    [ "$(sort -n "$T/out" | head -n 1)" -eq 1 ]
    [ "$(sort -n "$T/out" | tail -n 1)" -eq 1048581 ]
    ! cmp -s "$T/out" <(seq 1048581)
    # --header, -o and -z work as for small ranges
    "$RIFFLE" -i 5-2000000 --header=2 -n 3 -o "$T/h" --seed=1
    [ "$(head -n 2 "$T/h" | tr '\n' ' ')" = "5 6 " ] && [ "$(wc -l < "$T/h")" -eq 5 ]
    for v in $(tail -n 3 "$T/h"); do [ "$v" -ge 7 ] && [ "$v" -le 2000000 ]; done
    cmp <("$RIFFLE" -i 1-2000000 -n 50 --seed=2 -z | tr '\0' '\n') \
        <("$RIFFLE" -i 1-2000000 -n 50 --seed=2)
}

@test "-i over 2^20 numbers: a closed pipe ends it quietly" {
    run bash -c '"$0" -i 0-999999999999 2>"$1/err" | head -n 3 | wc -l; echo "${PIPESTATUS[0]}"' "$RIFFLE" "$T"
    [ "${lines[0]}" -eq 3 ]
    [ "${lines[1]}" -eq 141 ]   # SIGPIPE, as shuf
    [ ! -s "$T/err" ]
    # With SIGPIPE ignored: EPIPE, reported as shuf reports it.
    run bash -c 'trap "" PIPE; "$0" -i 0-18446744073709551615 2>"$1/err" | head -n 1 >/dev/null; echo "${PIPESTATUS[0]}"' "$RIFFLE" "$T"
    [ "$output" -eq 1 ]
    [ "$(cat "$T/err")" = "riffle: write error: Broken pipe" ]
}

@test "multiple -i, -o and --random-source" {
    run "$RIFFLE" -i 1-3 -i 2-3
    [ "$status" -eq 1 ] && [ "$output" = "riffle: multiple -i options specified" ]
    run "$RIFFLE" -o "$T/a" -o "$T/b" -e x
    [ "$status" -eq 1 ] && [ "$output" = "riffle: multiple output files specified" ]
    run "$RIFFLE" --random-source=a --random-source=b -e x
    [ "$status" -eq 1 ] && [ "$output" = "riffle: multiple random sources specified" ]
    # the same value twice is accepted, as by shuf
    "$RIFFLE" -o "$T/a" -o "$T/a" -e x
    [ "$(cat "$T/a")" = x ]
}

@test "conflicting options and extra operands: usage errors" {
    run "$RIFFLE" -e -i 1-3
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: cannot combine -e and -i options" ]
    [ "${lines[1]}" = "Try 'riffle --help' for more information." ]
    run "$RIFFLE" -i 1-3 foo
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: extra operand 'foo'" ]
    [ "${lines[1]}" = "Try 'riffle --help' for more information." ]
    run "$RIFFLE" -i 1-2 -
    [ "${lines[0]}" = "riffle: extra operand '-'" ]
}

@test "unknown options and missing arguments: getopt's messages" {
    run "$RIFFLE" --bogus
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: unrecognized option '--bogus'" ]
    [ "${lines[1]}" = "Try 'riffle --help' for more information." ]
    run "$RIFFLE" -q
    [ "${lines[0]}" = "riffle: invalid option -- 'q'" ]
    run "$RIFFLE" -n
    [ "${lines[0]}" = "riffle: option requires an argument -- 'n'" ]
}

@test "long options abbreviate as in shuf (--head still means --head-count)" {
    run "$RIFFLE" --head=2 -i 1-9
    [ "$status" -eq 0 ] && [ "${#lines[@]}" -eq 2 ]
    run "$RIFFLE" --hea=3 -i 1-9
    [ "${#lines[@]}" -eq 3 ]
    run "$RIFFLE" --inp=1-4 --rep --hea 6
    [ "${#lines[@]}" -eq 6 ]
    run "$RIFFLE" --ec --z a b
    [ "$status" -eq 0 ]
    run "$RIFFLE" --he
    [ "$status" -eq 1 ]
    [[ "${lines[0]}" == "riffle: option '--he' is ambiguous; possibilities:"* ]]
}

@test "missing, directory and unreadable FILE: riffle: FILE: reason" {
    run "$RIFFLE" "$T/nope"
    [ "$status" -eq 1 ] && [ "$output" = "riffle: $T/nope: No such file or directory" ]
    run "$RIFFLE" "$T"
    [ "$status" -eq 1 ] && [ "$output" = "riffle: $T: Is a directory" ]
    if [ "$(id -u)" -ne 0 ]; then
        echo x > "$T/locked"; chmod 000 "$T/locked"
        run "$RIFFLE" "$T/locked"
        [ "$status" -eq 1 ] && [ "$output" = "riffle: $T/locked: Permission denied" ]
    fi
}

@test "a write error is reported, never a silent truncation" {
    run "$RIFFLE" -i 1-10 > /dev/full
    [ "$status" -eq 1 ] && [ "$output" = "riffle: write error: No space left on device" ]
    run "$RIFFLE" -i 1-10 -o /dev/full
    [ "$status" -eq 1 ] && [ "$output" = "riffle: write error: No space left on device" ]
    seq 100000 > "$T/in"
    run "$RIFFLE" -r "$T/in" -o /dev/full
    [ "$status" -eq 1 ] && [ "$output" = "riffle: write error: No space left on device" ]
}

@test "-o FILE writes the file; -o may name the input" {
    seq 500 > "$T/data"
    cp "$T/data" "$T/orig"
    "$RIFFLE" -o "$T/data" "$T/data"
    cmp <(sort "$T/orig") <(sort "$T/data")
    ! cmp -s "$T/orig" "$T/data"
    [ -z "$(ls -A "$T" | grep riffle)" ]
    "$RIFFLE" --output="$T/data" < "$T/data"
    cmp <(sort "$T/orig") <(sort "$T/data")
}

@test "-o keeps the file's permissions and follows a symlink" {
    seq 50 > "$T/data"; chmod 640 "$T/data"
    ln -s data "$T/link"
    "$RIFFLE" -o "$T/link" "$T/data"
    [ -L "$T/link" ]
    [ "$(stat -c %a "$T/data")" = 640 ]
    cmp <(seq 50 | sort) <(sort "$T/data")
}

@test "-o into a missing directory fails and leaves nothing" {
    run "$RIFFLE" -e a -o "$T/no/such/out"
    [ "$status" -eq 1 ] && [ "$output" = "riffle: $T/no/such/out: No such file or directory" ]
}

@test "-o is not touched when the input cannot be read" {
    echo keep > "$T/out"
    run "$RIFFLE" -o "$T/out" "$T/missing"
    [ "$status" -eq 1 ]
    [ "$(cat "$T/out")" = keep ]
    [ "$(ls -A "$T")" = out ]
}

@test "-o /dev/null (a device) is written in place, not replaced" {
    "$RIFFLE" -i 1-100 -o /dev/null
    [ -c /dev/null ]
}

@test "interrupted -o run: the original is intact and no temporary file is left" {
    export RIFFLE_NAMED_TEMPS=1   # named temporaries: their names are what is checked
    seq 200000 > "$T/data"
    cp "$T/data" "$T/orig"
    # default_signals: background jobs get SIGINT ignored, and riffle leaves
    # ignored signals be (bg_jobs.bash).  The run is finite (~1.5 GB) so that
    # a missed signal fails, not fills the disk.
    for sig in INT TERM HUP; do
        default_signals "$RIFFLE" -r -n 200000000 -o "$T/data" "$T/data" 3>&- &
        pid=$!
        bg_track "$pid"
        # signal it once its temporary file exists and is growing, then wait
        # in this shell, bounded (bg_jobs.bash: not `run wait`, a subshell)
        wait_until 60 temp_growing "$T"
        kill -s "$sig" "$pid"
        bg_reap "$pid"
        [ "$BG_STATUS" -gt 128 ]     # died of the signal
        cmp "$T/orig" "$T/data"
        [ -z "$(ls -A "$T" | grep '^\.riffle-' || true)" ]
    done
}

@test "several FILEs are read as one input (riffle mode)" {
    printf 'a\nb' > "$T/1"; printf 'c\n' > "$T/2"; : > "$T/3"; printf 'd' > "$T/4"
    "$RIFFLE" "$T/1" "$T/2" "$T/3" "$T/4" > "$T/out"
    cmp <(printf 'a\nb\nc\nd\n') <(sorted_lines "$T/out")
    seq 3 | "$RIFFLE" "$T/1" - > "$T/out"
    cmp <(printf '1\n2\n3\na\nb\n') <(sorted_lines "$T/out")
}

@test "--header=K keeps the first K lines first, in place" {
    printf 'h1\nh2\n' > "$T/in"; seq 100 >> "$T/in"
    "$RIFFLE" --header=2 "$T/in" > "$T/out"
    [ "$(head -n 2 "$T/out")" = "$(printf 'h1\nh2')" ]
    cmp <(sorted_lines "$T/in") <(sorted_lines "$T/out")
    # -n counts only the shuffled lines
    run "$RIFFLE" --header=2 -n 3 "$T/in"
    [ "${#lines[@]}" -eq 5 ] && [ "${lines[0]}" = h1 ] && [ "${lines[1]}" = h2 ]
    # a header longer than the input: the input, in order
    run "$RIFFLE" --header=10 -e a b c
    [ "$output" = "$(printf 'a\nb\nc')" ]
    run "$RIFFLE" --header=x -e a
    [ "$status" -eq 1 ] && [ "$output" = "riffle: invalid header line count: 'x'" ]
}

@test "--help and --version" {
    run "$RIFFLE" --help
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "Usage: riffle [OPTION]... [FILE]..." ]]
    for opt in --echo --input-range --head-count --output --random-source --repeat \
               --zero-terminated --seed --rng --header; do
        [[ "$output" == *"$opt"* ]]
    done
    run "$RIFFLE" --version
    [ "$status" -eq 0 ] && [[ "${lines[0]}" == "riffle (riffle) "* ]]
    run bash -c '"$0" --help > /dev/full' "$RIFFLE"
    [ "$status" -eq 1 ] && [ "$output" = "riffle: write error: No space left on device" ]
}

@test "invoked as shuf: exactly shuf's interface and messages" {
    [ -x "$SHUF" ]
    run "$SHUF" --help
    [ "${lines[0]}" = "Usage: shuf [OPTION]... [FILE]" ]
    [[ "$output" != *--seed* ]]
    run "$SHUF" --seed=1 -e a
    [ "$status" -eq 1 ] && [ "${lines[0]}" = "shuf: unrecognized option '--seed=1'" ]
    [ "${lines[1]}" = "Try 'shuf --help' for more information." ]
    run "$SHUF" --header=1 -e a
    [ "$status" -eq 1 ]
    run "$SHUF" a b
    [ "$status" -eq 1 ] && [ "${lines[0]}" = "shuf: extra operand 'b'" ]
    run "$SHUF" -i 5-3
    [ "$output" = "shuf: invalid input range: '5-3'" ]
    run "$SHUF" -i 0-18446744073709551615   # 2^64 numbers: only riffle takes them
    [ "$status" -eq 1 ] && [ "$output" = "shuf: invalid input range: '0-18446744073709551615'" ]
    run "$SHUF" --he=1 -i 1-3      # still ambiguous: --head-count, --help
    [ "$status" -eq 1 ]
    run "$SHUF" --hea=1 -i 1-3
    [ "$status" -eq 0 ] && [ "${#lines[@]}" -eq 1 ]
    run "$SHUF" --version
    [[ "${lines[0]}" == "shuf (riffle) "* ]]
    seq 20 > "$T/in"
    "$SHUF" "$T/in" > "$T/out"
    cmp <(sort "$T/in") <(sort "$T/out")
}

@test "shuf mode and riffle mode agree with GNU shuf's messages" {
    command -v shuf >/dev/null || skip "GNU shuf not installed"
    shuf --version | head -n 1 | grep -q 'GNU coreutils' || skip "not GNU shuf"
    for args in "-i 5-3" "-n x" "-e -i 1-3" "-i 1-3 foo" "a b" "-r /dev/null" \
                "--bogus" "-n" "--random-source=/dev/null -e a b" "-i 1-3 -i 1-2" \
                "-o /dev/full -e a" "/nonexistent"; do
        want=$(shuf $args 2>&1 >/dev/null < /dev/null; echo "rc=$?")
        got=$("$SHUF" $args 2>&1 >/dev/null < /dev/null; echo "rc=$?")
        [ "$want" = "$got" ] || { echo "args: $args"; echo "shuf:  $want"; echo "ours:  $got"; false; }
    done
}

@test "the man page documents every option" {
    man="$BATS_TEST_DIRNAME/../../docs/riffle.1"
    [ -f "$man" ]
    for opt in echo input-range head-count output random-source repeat zero-terminated \
               help version seed rng header deck deck-file hands players cards kitty \
               preset unicode json rank count csv decks cut commit client-seed nonce \
               save-seed server-seed server-seed-file deal; do
        needle="\\-\\-${opt//-/\\-}"   # roff spells --a-b as \-\-a\-b
        grep -qF -- "$needle" "$man" || { echo "missing $needle"; false; }
    done
}
