#!/usr/bin/env bats
# Faults at the edges: -o naming a descriptor, a device or a dangling link;
# SIGXFSZ raised by the kernel for a write past `ulimit -f` leaves no
# temporary file (every terminating signal sent in each phase: cli_signals);
# a closed pipe with SIGPIPE ignored is reported as shuf reports it;
# getrandom(2) answering EAGAIN is retried.

load ../lib/bg_jobs

teardown() {
    bg_cleanup
}

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    SHUF="$(dirname "$RIFFLE")/shuf"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
    mkdir -p "$T/tmp" "$T/x"
    seq 1 1000 > "$T/in"
    seq 1 300000 > "$T/big" # 2 MB: past a `ulimit -f 100` (100 KiB) limit
}

# ---- -o to what is not a regular file ----

# Run riffle with -o NAME, its standard output a pipe into cat.
through_pipe() {
    run bash -c "'$RIFFLE' --seed=3 -o '$1' '$T/in' | cat"
}

@test "-o /dev/stdout, /dev/fd/1 and /proc/self/fd/1 with stdout a pipe write every record" {
    "$RIFFLE" --seed=3 "$T/in" > "$T/want"
    for name in /dev/stdout /dev/fd/1 /proc/self/fd/1; do
        [ -e "$name" ] || continue
        through_pipe "$name"
        [ "$status" -eq 0 ]
        [ "$output" = "$(cat "$T/want")" ]
    done
    # The name itself is untouched (no file renamed over it).
    [ -L /dev/stdout ] || [ -c /dev/stdout ]
    [ -z "$(ls -A /dev | grep '^\.riffle-' || true)" ]
}

@test "-o through a symlink to /dev/stdout writes to the pipe and keeps the link" {
    "$RIFFLE" --seed=3 "$T/in" > "$T/want"
    ln -s /proc/self/fd/1 "$T/direct"
    ln -s /dev/stdout "$T/via-dev"
    for l in direct via-dev; do
        through_pipe "$T/$l"
        [ "$status" -eq 0 ]
        [ "$output" = "$(cat "$T/want")" ]
        [ -L "$T/$l" ]
    done
    [ -z "$(ls -A "$T" | grep '^\.riffle-' || true)" ]
}

@test "-o /dev/stdout with stdout a socket writes to the socket" {
    command -v python3 > /dev/null || skip "python3 is not installed"
    "$RIFFLE" --seed=3 "$T/in" > "$T/want"
    run python3 -c 'import socket, subprocess, sys
a, b = socket.socketpair()
p = subprocess.Popen(sys.argv[1:], stdout=a)
a.close()
data = b""
while True:
    chunk = b.recv(65536)
    if not chunk:
        break
    data += chunk
sys.stdout.write(data.decode())
sys.exit(p.wait())' "$RIFFLE" --seed=3 -o /dev/stdout "$T/in"
    [ "$status" -eq 0 ]
    [ "$output" = "$(cat "$T/want")" ]
}

@test "-o to a dangling symlink creates its target and keeps the link" {
    "$RIFFLE" --seed=3 "$T/in" > "$T/want"
    mkdir "$T/d"
    ln -s ../target-rel "$T/d/rel"     # relative to the link's directory
    ln -s "$T/target-abs" "$T/abs"
    ln -s "$T/abs" "$T/chain"          # a link to the dangling link
    "$RIFFLE" --seed=3 -o "$T/d/rel" "$T/in"
    "$RIFFLE" --seed=3 -o "$T/chain" "$T/in"
    [ -L "$T/d/rel" ] && [ -L "$T/abs" ] && [ -L "$T/chain" ]
    cmp "$T/want" "$T/target-rel"
    cmp "$T/want" "$T/target-abs"
    # A link into a missing directory: an error, nothing created.
    ln -s "$T/nodir/f" "$T/bad"
    run "$RIFFLE" -o "$T/bad" "$T/in"
    [ "$status" -eq 1 ]
    [[ "$output" == *"No such file or directory"* ]]
    [ -L "$T/bad" ]
    [ -z "$(ls -A "$T" "$T/d" | grep '^\.riffle-' || true)" ]
}

# ---- SIGXFSZ: a write past `ulimit -f` ----

@test "SIGXFSZ (ulimit -f) during -o removes the temporary file, FILE unchanged" {
    echo original > "$T/x/out"
    run bash -c "ulimit -f 100; trap - XFSZ; exec '$RIFFLE' -o '$T/x/out' '$T/big'"
    [ "$status" -eq 153 ]    # 128 + SIGXFSZ
    [ "$(cat "$T/x/out")" = original ]
    [ -z "$(ls -A "$T/x" | grep '^\.riffle-' || true)" ]
}

@test "SIGXFSZ (ulimit -f) during an external run removes the bucket directory" {
    run bash -c "ulimit -f 100; trap - XFSZ; exec '$RIFFLE' --memory=64K -T '$T/tmp' '$T/big' > '$T/x/out'"
    [ "$status" -eq 153 ]
    [ -z "$(ls -A "$T/tmp")" ]
}

@test "a bucket file past ulimit -f (EFBIG on a helper thread) is reported, nothing left" {
    export RIFFLE_NAMED_TEMPS=1   # named temporaries: their names are what is checked
    # The bucket files outgrow the limit, the output (/dev/null) cannot: a
    # write of the engine's own thread fails with EFBIG (its SIGXFSZ is
    # blocked there), or, from a program thread, the signal ends the run.
    run bash -c "ulimit -f 4; trap - XFSZ; exec '$RIFFLE' --memory=64K -T '$T/tmp' '$T/big' > /dev/null"
    [ "$status" -eq 1 ] || [ "$status" -eq 153 ]
    if [ "$status" -eq 1 ]; then
        [[ "$output" == "riffle: $T/tmp/riffle-"*": File too large" ]]
    fi
    [ -z "$(ls -A "$T/tmp")" ]
}

@test "SIGXFSZ (ulimit -f) during --split removes every part's temporary file" {
    for ext in "" "--memory=64K -T $T/tmp"; do
        run bash -c "ulimit -f 100; trap - XFSZ; exec '$RIFFLE' $ext --split=3 --output-pattern='$T/x/p%d' '$T/big'"
        [ "$status" -eq 153 ]
        [ -z "$(ls -A "$T/x")" ]
        [ -z "$(ls -A "$T/tmp")" ]
    done
}

# ---- a closed pipe with SIGPIPE ignored ----

@test "with SIGPIPE ignored, a reader that goes away is reported: write error: Broken pipe" {
    # As GNU shuf: `trap '' PIPE; seq 100000 | shuf | head -1` says
    # "shuf: write error: Broken pipe" and exits 1.
    for mode in "" "--memory=64K -T $T/tmp"; do
        run bash -c "trap '' PIPE; '$RIFFLE' $mode '$T/big' 2> '$T/err' | head -n 1 > /dev/null; echo \${PIPESTATUS[0]}"
        [ "$output" = 1 ]
        [ "$(cat "$T/err")" = "riffle: write error: Broken pipe" ]
        [ -z "$(ls -A "$T/tmp")" ]
    done
    run bash -c "trap '' PIPE; '$SHUF' '$T/big' 2> '$T/err' | head -n 1 > /dev/null; echo \${PIPESTATUS[0]}"
    [ "$output" = 1 ]
    [ "$(head -n 1 "$T/err")" = "shuf: write error: Broken pipe" ]
}

# ---- getrandom(2) answering EAGAIN ----

@test "getrandom failing with EAGAIN is retried, then /dev/urandom is read" {
    command -v strace > /dev/null || skip "strace is not installed"
    strace -f -o /dev/null true 2> /dev/null || skip "strace cannot trace here (ptrace refused)"
    # LeakSanitizer cannot run under ptrace: the sanitizer build's leak check
    # is off for these runs (the rest of the suite keeps it)
    export ASAN_OPTIONS=detect_leaks=0
    # Once: the retry succeeds.
    run timeout 60 strace -f -o /dev/null -e trace=getrandom \
        -e inject=getrandom:error=EAGAIN:when=1 "$RIFFLE" "$T/in"
    [ "$status" -eq 0 ]
    [ "$(printf '%s\n' "$output" | sort -n)" = "$(cat "$T/in")" ]
    # Always: after about a second of retries, /dev/urandom.
    run timeout 60 strace -f -o /dev/null -e trace=getrandom \
        -e inject=getrandom:error=EAGAIN "$RIFFLE" "$T/in"
    [ "$status" -eq 0 ]
    [ "$(printf '%s\n' "$output" | sort -n)" = "$(cat "$T/in")" ]
}
