#!/usr/bin/env bats
# Every signal whose default action ends the process and that GNU sort
# cleans up on (HUP, INT, QUIT, PIPE, ALRM, TERM, XCPU, XFSZ, VTALRM, PROF),
# and USR1, USR2, in each phase that has temporary files:
#   scatter  the external engine's first pass (the bucket directory)
#   write    the external engine's second pass, writing -o's staging file
#   split    the --split parts' staging files being written
# riffle must die of the signal (status 128 + N) leaving no bucket
# directory, no .riffle-* staging file, and -o and the parts as they were.
# Named temporaries (RIFFLE_NAMED_TEMPS) throughout: they are what a
# handler must remove; unnamed ones go with the process (cli_kill9).
#
# No timing: the scatter phase is held open on a FIFO riffle reads and is
# signalled once its progress line and bucket files show it; the write
# phases are signalled by strace at riffle's first write(2) of an output
# (nothing else is written with write(2) without --progress).

load ../lib/bg_jobs

SIGNALS="HUP INT QUIT PIPE ALRM TERM USR1 USR2 XCPU XFSZ VTALRM PROF"

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    export RIFFLE_NAMED_TEMPS=1
    T="$BATS_TEST_TMPDIR"
    mkdir -p "$T/tmp" "$T/out"
    seq 1 20000 > "$T/in"       # 109 KB: many buckets under --memory=2K
    echo original > "$T/out/o"
    echo keep > "$T/out/p0"
}

teardown() {
    exec 8>&- 2> /dev/null || true
    bg_cleanup
}

need_strace() {
    command -v strace > /dev/null || skip "strace not installed (scripts/deps.sh installs it)"
    strace -qq -o /dev/null true 2> /dev/null || skip "strace cannot trace here"
    # LeakSanitizer cannot run under ptrace (a sanitizer build's exit check)
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
}

# nothing_left SIG PHASE STATUS: the verdict for one signal in one phase.
nothing_left() {
    local sig=$1 phase=$2 st=$3 want left
    want=$((128 + $(kill -l "$sig")))
    [ "$st" = "$want" ] || { echo "$sig in $phase: status $st, want $want" >&2; return 1; }
    left=$(ls -A "$T/tmp")
    [ -z "$left" ] || { echo "$sig in $phase: -T holds $left" >&2; return 1; }
    left=$(ls -A "$T/out" | tr '\n' ' ')
    [ "$left" = "o p0 " ] || { echo "$sig in $phase: outputs dir holds $left" >&2; return 1; }
    [ "$(cat "$T/out/o")" = original ] || { echo "$sig in $phase: -o changed" >&2; return 1; }
    [ "$(cat "$T/out/p0")" = keep ] || { echo "$sig in $phase: part 0 changed" >&2; return 1; }
}

# in_scatter SIG: riffle reads $T/in, then standard input, a FIFO held open
# here (fd 8) and never written; SIG goes once it is scattering.
in_scatter() {
    local sig=$1 pid
    [ -p "$T/fifo" ] || mkfifo "$T/fifo"
    exec 8<> "$T/fifo"
    : > "$T/err"
    RIFFLE_PROGRESS_DELAY_MS=0 default_signals "$RIFFLE" --progress --memory=2K -T "$T/tmp" \
        -o "$T/out/o" "$T/in" - < "$T/fifo" 2> "$T/err" 8>&- 3>&- &
    pid=$!
    bg_track "$pid"
    wait_until 60 scattering || { echo "$sig: no scatter phase seen" >&2; return 1; }
    kill -s "$sig" "$pid"
    bg_reap "$pid"
    exec 8>&-
    nothing_left "$sig" scatter "$BG_STATUS"
}

# at_first_write SIG PHASE RIFFLE-ARGS...: SIG at riffle's first write(2).
at_first_write() {
    local sig=$1 phase=$2 st=0
    shift 2
    (default_signals timeout 60 strace -f -qq -o /dev/null -e trace=write \
        -e inject=write:signal="$sig":when=1 "$RIFFLE" --threads=1 "$@" 3>&-) 2> /dev/null || st=$?
    nothing_left "$sig" "$phase" "$st"
}

@test "every terminating signal during the external scatter: nothing left" {
    for sig in $SIGNALS; do
        in_scatter "$sig"
    done
}

@test "every terminating signal during the external write of -o: nothing left" {
    need_strace
    for sig in $SIGNALS; do
        at_first_write "$sig" write --memory=2K -T "$T/tmp" -o "$T/out/o" "$T/in"
    done
}

@test "every terminating signal while --split parts are written: nothing left" {
    need_strace
    for sig in $SIGNALS; do
        at_first_write "$sig" split --split=3 --output-pattern="$T/out/p%d" "$T/in"
        at_first_write "$sig" split --memory=2K -T "$T/tmp" --split=3 \
            --output-pattern="$T/out/p%d" "$T/in"
        at_first_write "$sig" split --key=1 --split=3 --output-pattern="$T/out/p%d" "$T/in"
    done
}
