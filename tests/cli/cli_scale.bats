#!/usr/bin/env bats
# The options for large runs: --memory, -T/--temporary-directory, --threads,
# --progress/--no-progress; and the signal-time cleanup (SIGINT/SIGTERM/SIGHUP
# remove temporaries; SIGBUS from a shrinking mapped input is reported).

load ../lib/bg_jobs

teardown() {
    bg_cleanup
}

# Whether DIR holds a temporary file of -o (.riffle-*), empty or not.
has_temp() {
    ls -A "$1" | grep -q '^\.riffle-'
}

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
    for m in 0 0K 0% x '' 1.5G 5X 1KiB 101% 1000% 1%% -1 ' 1' '1 ' '1 B' 1M2 16777216T 18446744073709551616 M; do
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
    default_signals "$RIFFLE" "$@" 3>&- &
    pid=$!
    bg_track "$pid"
    wait_until 60 temp_growing "$dir"
    kill -s "$sig" "$pid"
    bg_reap "$pid"               # here, bounded: not `run wait` (bg_jobs.bash)
    [ "$BG_STATUS" -gt 128 ]     # died of the signal, as without a handler
    [ -z "$(ls -A "$dir" | grep '^\.riffle-' || true)" ]
}

@test "SIGINT/SIGTERM/SIGHUP during -o and --split runs: targets intact, no temporaries" {
    export RIFFLE_NAMED_TEMPS=1   # named temporaries: their names are what is checked
    seq 100000 > "$T/data"
    cp "$T/data" "$T/orig"
    echo keep > "$T/p0"
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
    export RIFFLE_NAMED_TEMPS=1   # named temporaries: their names are what is checked
    seq 8000000 > "$T/big"
    echo keep > "$T/out"
    # stderr is a FIFO already full: riffle's first progress line (in the write
    # phase, after the temporary file was made) blocks until we drain it, so
    # the truncation surely comes before riffle has gathered every record
    mkfifo "$T/errfifo"
    exec 8<> "$T/errfifo"   # not fd 3: bats owns it
    dd if=/dev/zero of="$T/errfifo" bs=4096 count=1024 oflag=nonblock 2> /dev/null || true
    RIFFLE_PROGRESS_DELAY_MS=0 "$RIFFLE" --progress -o "$T/out" "$T/big" 2> "$T/errfifo" 3>&- 8>&- &
    pid=$!
    bg_track "$pid"   # if its output never comes, teardown kills it
    wait_until 60 has_temp "$T"
    : > "$T/big"
    cat <&8 > "$T/errlog" 3>&- &
    catpid=$!
    bg_track "$catpid"
    bg_reap "$pid"
    st=$BG_STATUS
    # the message is riffle's last write: once it is read, cat has it all
    wait_until 30 grep -qa 'bus error' "$T/errlog" || true
    kill "$catpid"
    exec 8>&-
    [ "$st" -eq 1 ]
    [ "$(tr -d '\0' < "$T/errlog" | grep -vE "$PROGRESS_RE")" = \
      "riffle: bus error: an input file shrank while being read" ]
    [ "$(cat "$T/out")" = keep ]
    [ -z "$(ls -A "$T" | grep '^\.riffle-' || true)" ]
}

@test "signals during an external shuffle (tiny --memory) remove the temporary directory" {
    export RIFFLE_NAMED_TEMPS=1   # named temporaries: their names are what is checked
    seq 3000000 > "$T/in"   # 21 MB against a 1 MiB budget: spills to bucket files
    mkdir "$T/tmp"
    mkfifo "$T/outfifo"
    exec 8<> "$T/outfifo"   # a reader that never reads: riffle blocks while writing
    for sig in INT TERM HUP; do
        default_signals "$RIFFLE" --memory=1M -T "$T/tmp" "$T/in" > "$T/outfifo" 3>&- 8>&- &
        pid=$!
        bg_track "$pid"
        wait_until 60 buckets_exist "$T/tmp"   # the signal comes with bucket files
        kill -s "$sig" "$pid"
        bg_reap "$pid"       # here, bounded: not `run wait` (bg_jobs.bash)
        [ "$BG_STATUS" -gt 128 ]
        [ -z "$(ls -A "$T/tmp")" ]
        # empty the pipe for the next run: riffle, its only writer, is gone,
        # so a non-blocking read gets all it wrote and stops at the end
        dd if="$T/outfifo" of=/dev/null iflag=nonblock bs=64k 2> /dev/null || true
    done
    exec 8>&-
}

# ------------------------------------------------------------------------
# The streamed head (-n K, src/engine/head.c) and the record walk it shares
# with the external engine (src/engine/walk.c, walk_keys.c): records are
# taken in chunks of ~64 KiB, keys in pieces of 4096 (the first 2^16 items)
# then whole blocks of 2^16 drawn ahead on a helper thread, and only the
# records whose keys pass are located.  Whatever the inputs' shape, -n K must
# be the first K records of the full (in-memory) shuffle, from a path (mapped
# in windows: --memory=4M maps 1 MiB at a time), a redirected stdin and a
# pipe (1 MiB reads), on one thread or two.

# FILE K OPTION...: -n K is the head of the full shuffle under OPTION...
head_is_prefix() {
    local f=$1 k=$2 z= h=0 o
    shift 2
    for o in "$@"; do
        case $o in -z) z=-z ;; --header=*) h=${o#--header=} ;; esac
    done
    "$RIFFLE" --seed=edge "$@" "$f" | head $z -n $((h + k)) > "$T/want"
    [ -s "$T/want" ] || [ "$k" -eq 0 ]
    local mem=--memory=4M
    [ "$k" -gt 16000 ] && mem=--memory=64M   # -n K streams while K <= memory / 256
    "$RIFFLE" --seed=edge "$@" $mem -n "$k" "$f" | cmp "$T/want" -
    "$RIFFLE" --seed=edge "$@" --threads=1 $mem -n "$k" "$f" | cmp "$T/want" -
    "$RIFFLE" --seed=edge "$@" -n "$k" < "$f" | cmp "$T/want" -
    cat "$f" | "$RIFFLE" --seed=edge "$@" -n "$k" | cmp "$T/want" -
    cat "$f" | "$RIFFLE" --seed=edge "$@" --threads=1 -n "$k" | cmp "$T/want" -
}

# Distinct lines of 1 to ~100 bytes: a record found one off is never equal.
make_lines() { # N FILE
    awk -v n="$1" 'BEGIN { for (i = 1; i <= n; i++) {
        s = i ":"; for (j = 0; j < (i * 7919) % 97; j++) s = s sprintf("%c", 97 + (i + j) % 26)
        print s } }' > "$2"
}

@test "-n K = head of the full shuffle: 300000 lines (chunk, block, key-block edges)" {
    make_lines 300000 "$T/in"      # ~16 MB: key blocks 0-4, many windows and reads
    for k in 1 2 1000 4097 70000 299999 300000 400000; do
        head_is_prefix "$T/in" "$k"
    done
    head_is_prefix "$T/in" 5000 --rng=xoshiro256++
    head_is_prefix "$T/in" 5000 --rng=pcg64
}

@test "-n K = head of the full shuffle: records longer than a chunk, a read, a window" {
    make_lines 2000 "$T/short"
    # 70 KB > a chunk; 1.5 MB > a read block and a window; 3 MB > both twice
    { head -n 500 "$T/short"
      printf 'L1:%070000d\n' 1
      head -n 900 "$T/short" | tail -n 400
      printf 'L2:%01500000d\n' 2
      printf 'L3:%03000000d\n' 3
      printf 'L4:%070000d\n' 4
      tail -n 1100 "$T/short"; } > "$T/in"
    for k in 1 3 20 500 2003 2004 3000; do
        head_is_prefix "$T/in" "$k"
    done
    # every long record surely taken, in its place
    "$RIFFLE" --seed=edge --memory=4M -n 2004 "$T/in" | sort | cmp - <(sort "$T/in")
}

@test "-n K = head of the full shuffle: empty lines (65536 records to a chunk), duplicates" {
    # 400000 records in 1.2 MB: chunks cut by the 4096-key pieces and the
    # 2^16-key blocks rather than by bytes
    awk 'BEGIN { for (i = 1; i <= 400000; i++) print (i % 1000 == 0 ? i : "") }' > "$T/in"
    for k in 1 5 300 4096 4097 70000; do
        head_is_prefix "$T/in" "$k"
    done
    yes 'same line' | head -n 150000 > "$T/dup"
    head_is_prefix "$T/dup" 100
}

@test "-n K = head of the full shuffle: --header, -z, an unterminated end, several files" {
    make_lines 150000 "$T/in"
    for h in 1 3 70000 149999 150000 160000; do
        head_is_prefix "$T/in" 50 --header=$h
    done
    head_is_prefix "$T/in" 0 --header=70000
    tr '\n' '\0' < "$T/in" > "$T/inz"
    head_is_prefix "$T/inz" 2000 -z
    head_is_prefix "$T/inz" 2000 -z --header=5
    head -c -1 "$T/in" > "$T/open"        # no final newline: it gets one
    for k in 1 1000 149999 150000; do
        head_is_prefix "$T/open" "$k"
    done
    [ "$("$RIFFLE" --seed=edge -n 150000 "$T/open" | grep -c '^150000:')" = 1 ]
    # several files, the first unterminated: each last record ends there
    make_lines 3000 "$T/b"
    want=$("$RIFFLE" --seed=edge "$T/open" "$T/b" "$T/open" | head -n 9000 | md5sum)
    [ "$("$RIFFLE" --seed=edge --memory=4M -n 9000 "$T/open" "$T/b" "$T/open" | md5sum)" = "$want" ]
    [ "$(cat "$T/b" | "$RIFFLE" --seed=edge -n 9000 "$T/open" - "$T/open" | md5sum)" = "$want" ]
    [ "$(cat "$T/open" | "$RIFFLE" --seed=edge -n 9000 - "$T/b" "$T/open" | md5sum)" = "$want" ]
}

@test "the external engine walks the same records: long ones, past 2^16 items, threads" {
    make_lines 200000 "$T/in"
    { cat "$T/in"; printf 'L:%01500000d\n' 1; head -n 1000 "$T/in"; } > "$T/mixed"
    for f in in mixed; do
        "$RIFFLE" --seed=x "$T/$f" > "$T/mem"
        mkdir -p "$T/tmp"
        for t in 1 2; do
            "$RIFFLE" --seed=x --threads=$t --memory=2M -T "$T/tmp" "$T/$f" | cmp "$T/mem" -
            cat "$T/$f" | "$RIFFLE" --seed=x --threads=$t --memory=2M -T "$T/tmp" | cmp "$T/mem" -
        done
        [ -z "$(ls -A "$T/tmp")" ]
    done
}
