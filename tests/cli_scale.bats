#!/usr/bin/env bats
# The options for large runs: --memory, -T/--temporary-directory, --threads,
# --progress/--no-progress; and the signal-time cleanup (SIGINT/SIGTERM/SIGHUP
# remove temporaries; SIGBUS from a shrinking mapped input is reported).

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    SHUF="$(dirname "$RIFFLE")/shuf"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
}

usage_error() { # expected first line
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "$1" ]
    [ "${lines[1]}" = "Try 'riffle --help' for more information." ]
}

@test "--memory: integers with K/M/G/T (and an optional B), or N% of RAM" {
    for m in 1 4096 512M 2GB 1k 1K 3g 1T 7b 8kB 64MB 50% 1% 100%; do
        run "$RIFFLE" --memory="$m" --seed=1 -e a b c
        [ "$status" -eq 0 ] && [ "$output" = "$("$RIFFLE" --seed=1 -e a b c)" ]
    done
}

@test "--memory: junk, zero, overflow and bad percentages are usage errors" {
    for m in 0 0K 0% x '' 1.5G 5X 1KiB 101% 1000% 1%% -1 ' 1' 1M2 16777216T 18446744073709551616 M; do
        run "$RIFFLE" --memory="$m" -e a
        usage_error "riffle: invalid memory size '$m'"
    done
}

@test "--threads=N: 0 (all cores) up to 4096; the output does not depend on it" {
    seq 5000 > "$T/in"
    "$RIFFLE" --seed=t "$T/in" > "$T/ref"
    for n in 0 1 2 3 4096; do
        "$RIFFLE" --threads="$n" --seed=t "$T/in" | cmp "$T/ref" -
    done
    for n in x -1 4097 '' 1.5 99999999999999999999; do
        run "$RIFFLE" --threads="$n" -e a
        usage_error "riffle: invalid thread count '$n'"
    done
}

@test "-T DIR: checked up front -- it must be an existing, writable directory" {
    run "$RIFFLE" -T "$T/missing" -e a
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: cannot use temporary directory '$T/missing': No such file or directory" ]
    : > "$T/file"
    run "$RIFFLE" --temporary-directory="$T/file" -e a
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: cannot use temporary directory '$T/file': Not a directory" ]
    run "$RIFFLE" -T "$T" -T "$T/other" -e a
    [ "$status" -eq 1 ] && [ "$output" = "riffle: multiple temporary directories specified" ]
    run "$RIFFLE" -T "$T" --temporary-directory="$T" -e a
    [ "$status" -eq 0 ] && [ "$output" = a ]
    # $TMPDIR is only used when needed: a missing one does not fail a small run
    run env TMPDIR="$T/missing" "$RIFFLE" -e a
    [ "$status" -eq 0 ] && [ "$output" = a ]
}

@test "invoked as shuf, the scale options do not exist" {
    run "$SHUF" -T /tmp -e a
    [ "$status" -eq 1 ] && [ "${lines[0]}" = "shuf: invalid option -- 'T'" ]
    [ "${lines[1]}" = "Try 'shuf --help' for more information." ]
    for opt in --memory=1G --threads=1 --progress --no-progress --temporary-directory=/tmp; do
        run "$SHUF" "$opt" -e a
        [ "$status" -eq 1 ] && [ "${lines[0]}" = "shuf: unrecognized option '$opt'" ]
    done
}

@test "--help lists the options" {
    run "$RIFFLE" --help
    for opt in --memory=SIZE "-T, --temporary-directory=DIR" --threads=N --progress \
               --no-progress --split=SPEC --output-pattern=PATTERN; do
        [[ "$output" == *"$opt"* ]]
    done
}

# A progress line: "riffle: PHASE  DONE / TOTAL  P%  RATE/s  ETA T" (or,
# without a total, "riffle: PHASE  DONE  RATE/s").
PROGRESS_RE='^riffle: (read|scatter|shuffle|write) +[0-9.]+ [KMGTPE]?i?B( / [0-9.]+ [KMGTPE]?i?B  [0-9]+%)?  [0-9.]+ [KMGTPE]?i?B/s(  ETA ([0-9]+s|[0-9]+m[0-9]{2}s|[0-9]+h[0-9]{2}m|\?))?$'

@test "--progress forced on a non-terminal: newline-terminated progress lines on stderr" {
    seq 300000 > "$T/in"
    RIFFLE_PROGRESS_DELAY_MS=0 "$RIFFLE" --progress "$T/in" > "$T/out" 2> "$T/err"
    cmp <(sort "$T/in") <(sort "$T/out")
    [ -s "$T/err" ]
    [ "$(grep -cvE "$PROGRESS_RE" "$T/err")" -eq 0 ]
    grep -qE '^riffle: write ' "$T/err"
    [ "$(tr -cd '\r\033' < "$T/err" | wc -c)" -eq 0 ]   # no terminal codes
}

@test "progress: silent during the first second, off by default on a non-terminal, and --no-progress" {
    seq 300000 > "$T/in"
    # a short run, forced, with the normal 1 s delay: nothing
    "$RIFFLE" --progress "$T/in" > /dev/null 2> "$T/err"
    [ ! -s "$T/err" ]
    RIFFLE_PROGRESS_DELAY_MS=0 "$RIFFLE" "$T/in" > /dev/null 2> "$T/err"
    [ ! -s "$T/err" ]
    RIFFLE_PROGRESS_DELAY_MS=0 "$RIFFLE" --progress --no-progress "$T/in" > /dev/null 2> "$T/err"
    [ ! -s "$T/err" ]
    RIFFLE_PROGRESS_DELAY_MS=0 "$SHUF" "$T/in" > /dev/null 2> "$T/err"
    [ ! -s "$T/err" ]
    # the last of --progress / --no-progress wins
    RIFFLE_PROGRESS_DELAY_MS=0 "$RIFFLE" --no-progress --progress "$T/in" > /dev/null 2> "$T/err"
    [ -s "$T/err" ]
}

@test "progress on a terminal: rewritten in place, erased at the end" {
    command -v script > /dev/null || skip "script(1) is needed for a pseudo-terminal"
    seq 300000 > "$T/in"
    RIFFLE_PROGRESS_DELAY_MS=0 script -qec "'$RIFFLE' '$T/in' > /dev/null" /dev/null > "$T/tty"
    grep -q $'\rriffle: write ' "$T/tty"
    [ "$(tail -c 4 "$T/tty" | od -An -c | tr -d ' ')" = '\r033[K' ]
    # every line drawn is cleared to its end, and none ends in a newline
    [ "$(tr -cd '\n' < "$T/tty" | wc -c)" -eq 0 ]
}

# Start a long -o or split run in the background, wait until its temporary
# file in DIR is growing, send the signal, and check it died of it.
interrupt() { # sig dir riffle-args...
    local sig=$1 dir=$2; shift 2
    "$RIFFLE" "$@" 3>&- &
    pid=$!
    local tmp=""
    for _ in $(seq 200); do
        tmp=$(ls -A "$dir" | grep '^\.riffle-' | head -n 1 || true)
        [ -n "$tmp" ] && [ -s "$dir/$tmp" ] && break
        sleep 0.05
    done
    [ -n "$tmp" ]
    kill -s "$sig" "$pid"
    st=0
    wait "$pid" || st=$?
    [ "$st" -gt 128 ]            # died of the signal, as without a handler
    [ -z "$(ls -A "$dir" | grep '^\.riffle-' || true)" ]
}

@test "SIGINT/SIGTERM/SIGHUP during -o and --split runs: targets intact, no temporaries" {
    seq 100000 > "$T/data"
    cp "$T/data" "$T/orig"
    echo keep > "$T/p0"
    set -m   # background jobs keep SIGINT (see cli_shuf.bats)
    for sig in INT TERM HUP; do
        # -o: bounded (~1.2 GB) so that a missed signal fails, not fills the disk
        interrupt "$sig" "$T" -r -n 150000000 -o "$T/data" "$T/data"
        cmp "$T/orig" "$T/data"
        # split: every part's temporary is removed, the old part kept
        interrupt "$sig" "$T" -i 0-999999999999 -n 150000000 --split=3 \
            --output-pattern="$T/p%d"
        [ "$(cat "$T/p0")" = keep ] && [ ! -e "$T/p1" ] && [ ! -e "$T/p2" ]
    done
}

@test "SIGBUS: an input truncated while it is read gives a message and exit 1" {
    seq 8000000 > "$T/big"   # 62 MB: far more than the pipe holds
    # the reader waits for riffle's first bytes (the input is mapped and being
    # gathered), truncates the input, then drains; riffle, blocked on the
    # pipe until then, faults on the next record it gathers
    run bash -c '"$0" "$1/big" 2> "$1/err" | { head -c 1 > /dev/null; : > "$1/big"; cat > /dev/null; }
                 echo "${PIPESTATUS[0]}"' "$RIFFLE" "$T"
    [ "$output" = 1 ]
    [ "$(cat "$T/err")" = "riffle: bus error: an input file shrank while being read" ]
}

@test "SIGBUS with -o: the target is untouched and no temporary file is left" {
    seq 8000000 > "$T/big"
    echo keep > "$T/out"
    # stderr is a FIFO already full: riffle's first progress line (in the write
    # phase, after the temporary file was made) blocks until we drain it, so
    # the truncation surely comes before riffle has gathered every record
    mkfifo "$T/errfifo"
    exec 8<> "$T/errfifo"   # not fd 3: bats owns it
    dd if=/dev/zero of="$T/errfifo" bs=4096 count=1024 oflag=nonblock 2> /dev/null || true
    RIFFLE_PROGRESS_DELAY_MS=0 "$RIFFLE" --progress -o "$T/out" "$T/big" 2> "$T/errfifo" 3>&- &
    pid=$!
    found=0
    for _ in $(seq 400); do
        ls -A "$T" | grep -q '^\.riffle-' && found=1 && break
        sleep 0.05
    done
    if [ "$found" -eq 0 ]; then # blocked before making its output: unblock it, fail
        kill "$pid"; cat <&8 > /dev/null & sleep 1; kill $!; exec 8>&-
        false
    fi
    : > "$T/big"
    cat <&8 > "$T/errlog" &
    catpid=$!
    st=0
    wait "$pid" || st=$?
    for _ in $(seq 100); do
        grep -qa 'bus error' "$T/errlog" && break
        sleep 0.05
    done
    kill "$catpid"
    exec 8>&-
    [ "$st" -eq 1 ]
    [ "$(tr -d '\0' < "$T/errlog" | grep -vE "$PROGRESS_RE")" = \
      "riffle: bus error: an input file shrank while being read" ]
    [ "$(cat "$T/out")" = keep ]
    [ -z "$(ls -A "$T" | grep '^\.riffle-' || true)" ]
}

@test "signals during an external shuffle (tiny --memory) remove the temporary directory" {
    seq 3000000 > "$T/in"   # 21 MB against a 1 MiB budget: spills to bucket files
    mkdir "$T/tmp"
    mkfifo "$T/outfifo"
    exec 8<> "$T/outfifo"   # a reader that never reads: riffle blocks while writing
    set -m
    for sig in INT TERM HUP; do
        "$RIFFLE" --memory=1M -T "$T/tmp" "$T/in" > "$T/outfifo" 3>&- &
        pid=$!
        found=0
        for _ in $(seq 200); do
            d=$(ls -A "$T/tmp" | head -n 1)
            [ -n "$d" ] && [ -n "$(ls -A "$T/tmp/$d" 2> /dev/null)" ] && found=1 && break
            sleep 0.05
        done
        kill -s "$sig" "$pid"
        [ "$found" -eq 1 ]   # bucket files existed when the signal came
        st=0
        wait "$pid" || st=$?
        [ "$st" -gt 128 ]
        [ -z "$(ls -A "$T/tmp")" ]
        timeout 1 cat <&8 > /dev/null || true   # empty the pipe for the next run
    done
    exec 8>&-
}
