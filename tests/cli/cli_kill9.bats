#!/usr/bin/env bats
# SIGKILL, which no handler sees, in each phase of a run.  Where the file
# system has O_TMPFILE, every temporary file -- the external engine's
# buckets and spill file, the staging files of -o and of --split parts --
# is unnamed: nothing is left in -T nor beside the outputs, and the outputs
# are as they were.  On the fallback path (named temporaries, forced here
# with RIFFLE_NAMED_TEMPS as on a file system without O_TMPFILE) the bucket
# directory riffle-XXXXXX and the .riffle-XXXXXX staging files remain, and
# the removal docs/riffle.1 (FILES) gives takes them.  The fallback itself,
# on the errors a file system or kernel without O_TMPFILE gives, is run with
# those errors injected by strace (this kernel has no vfat to mount).
#
# The signal goes when riffle has reached the phase: the read and scatter
# phases are held open on a FIFO riffle reads and are signalled once its
# --progress line names them; the write phases are signalled by strace at
# riffle's first write(2) or fsync(2) of an output (nothing else is written
# with write(2) without --progress).

load ../lib/bg_jobs

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
    mkdir -p "$T/tmp" "$T/out"
    seq 1 400000 > "$T/in"          # 2.7 MB: more than one output buffer
    echo original > "$T/out/o"
    echo keep > "$T/out/p0"
}

teardown() {
    exec 8>&- 2> /dev/null || true
    bg_cleanup
}

# The file system of $T gives unnamed files (O_TMPFILE).
unnamed_here() {
    /usr/bin/python3 -c 'import os, sys
os.close(os.open(sys.argv[1], os.O_TMPFILE | os.O_WRONLY, 0o600))' "$T" 2> /dev/null
}

need_unnamed() {
    unnamed_here || skip "the file system of $T has no O_TMPFILE: the fallback tests cover it"
}

need_strace() {
    command -v strace > /dev/null || skip "strace not installed (scripts/deps.sh installs it)"
    strace -qq -o /dev/null true 2> /dev/null || skip "strace cannot trace here"
    # LeakSanitizer cannot run under ptrace (a sanitizer build's exit check)
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
}

# Nothing in -T, nothing beside the outputs, the outputs as they were.
nothing_left() {
    [ -z "$(ls -A "$T/tmp")" ]
    [ "$(ls -A "$T/out" | tr '\n' ' ')" = "o p0 " ]
    [ "$(cat "$T/out/o")" = original ]
    [ "$(cat "$T/out/p0")" = keep ]
}

# signalled_in SIG PHASE RIFFLE-ARGS...: riffle reads $T/in, then standard
# input, a FIFO held open here (fd 8) and never written: it waits in its
# read or scatter phase.  SIG goes once its progress line names PHASE, and
# riffle must die of it.
signalled_in() {
    local sig=$1 phase=$2 pid
    shift 2
    mkfifo "$T/fifo"
    exec 8<> "$T/fifo"
    : > "$T/err"
    RIFFLE_PROGRESS_DELAY_MS=0 default_signals "$RIFFLE" --progress "$@" "$T/in" - \
        < "$T/fifo" 2> "$T/err" 8>&- 3>&- &
    pid=$!
    bg_track "$pid"
    wait_until 60 grep -q "$phase" "$T/err"
    kill -s "$sig" "$pid"
    bg_reap "$pid"
    exec 8>&-
    rm -f "$T/fifo"
    [ "$BG_STATUS" -eq $((128 + $(kill -l "$sig"))) ]
}

killed_in() {
    signalled_in KILL "$@"
}

# strace_killed SYSCALL N RIFFLE-ARGS...: SIGKILL at riffle's N-th SYSCALL.
strace_killed() {
    local call=$1 n=$2
    shift 2
    run strace -f -qq -o /dev/null -e trace="$call" -e inject="$call":signal=KILL:when="$n" \
        "$RIFFLE" "$@"
    [ "$status" -eq 137 ]
}

# Every phase, one run each (the -o, the buckets, the split parts).
kill_every_phase() {
    killed_in read -o "$T/out/o"                                     # in memory: reading
    "$@"
    killed_in scatter --memory=64K -T "$T/tmp" -o "$T/out/o"         # external: scattering
    "$@"
    strace_killed write 1 --memory=64K -T "$T/tmp" -o "$T/out/o" "$T/in"   # external: writing
    "$@"
    strace_killed write 1 -o "$T/out/o" "$T/in"                      # in memory: writing
    "$@"
    strace_killed write 1 --split=3 --output-pattern="$T/out/p%d" "$T/in"  # part 0 being written
    "$@"
    strace_killed fsync 2 --memory=64K -T "$T/tmp" --split=3 \
        --output-pattern="$T/out/p%d" "$T/in"                        # every part written
    "$@"
}

@test "kill -9 in every phase, O_TMPFILE: nothing in -T, nothing beside the outputs" {
    need_unnamed
    need_strace
    kill_every_phase nothing_left
}

# The fallback: what a SIGKILL leaves, and the documented removal.
fallback_left() {
    ls -A "$T/tmp" "$T/out" > "$T/left"
    # the removal of docs/riffle.1, FILES, once no riffle runs
    local USER
    USER=$(id -un)
    find "$T/tmp" -maxdepth 1 -type d -name 'riffle-??????' -user "$USER" -exec rm -rf {} +
    find "$T/out" -maxdepth 1 -type f -name '.riffle-??????' -user "$USER" -delete
    nothing_left
    cat "$T/left" >> "$T/all-left"
}

@test "kill -9 on the fallback path (named temporaries): what is left, and its documented removal" {
    need_strace
    export RIFFLE_NAMED_TEMPS=1
    : > "$T/all-left"
    kill_every_phase fallback_left
    # the bucket directory and the staging files were there to remove
    grep -qE '^riffle-.{6}$' "$T/all-left"
    grep -qE '^\.riffle-.{6}$' "$T/all-left"
}

@test "O_TMPFILE: a terminating signal during the scatter leaves nothing either" {
    need_unnamed
    for sig in TERM INT HUP; do
        signalled_in "$sig" scatter --memory=64K -T "$T/tmp" -o "$T/out/o"
        nothing_left
    done
}

@test "O_TMPFILE: a full temporary directory is reported by its name, nothing left" {
    need_unnamed
    [ "$(id -u)" = 0 ] || skip "mounting a tmpfs needs root"
    mkdir -p "$T/small"
    mount -t tmpfs -o size=64k tmpfs "$T/small" 2> /dev/null || skip "cannot mount a small tmpfs here"
    run "$RIFFLE" --memory=4K -T "$T/small" -o "$T/out/o" "$T/in"
    left=$(ls -A "$T/small")
    umount "$T/small"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/small: No space left on device" ]
    [ -z "$left" ]
    nothing_left
}

@test "O_TMPFILE: -o F F and a new -o name are committed as before" {
    need_unnamed
    "$RIFFLE" --seed=2 "$T/in" > "$T/want"
    cp "$T/in" "$T/data"
    "$RIFFLE" --seed=2 --memory=64K -T "$T/tmp" -o "$T/data" "$T/data"
    cmp "$T/want" "$T/data"
    "$RIFFLE" --seed=2 -o "$T/new" "$T/in"
    cmp "$T/want" "$T/new"
    [ "$(stat -c %a "$T/new")" = "$(printf '%o' $((0666 & ~0$(umask))))" ]
    # a new file's mode is the creation mask's, whatever the mask
    for m in 027 002 077; do
        rm -f "$T/new"
        (umask $m; "$RIFFLE" --seed=2 -o "$T/new" "$T/in")
        [ "$(stat -c %a "$T/new")" = "$(printf '%o' $((0666 & ~0$m)))" ]
    done
    [ -z "$(ls -A "$T/tmp")" ]
    [ -z "$(ls -A "$T" | grep '^\.riffle-' || true)" ]
}

# A file system that refuses O_TMPFILE, as vfat does (EOPNOTSUPP) or a
# kernel without it (EISDIR, EINVAL): the refusal is injected with strace
# into the opens of the temporary and output directories only, and riffle
# goes on with named temporaries -- the same output, nothing left.
@test "O_TMPFILE refused (EOPNOTSUPP, EISDIR, EINVAL): named temporaries, the same output, nothing left" {
    need_strace
    "$RIFFLE" --seed=4 "$T/in" > "$T/want"
    for e in EOPNOTSUPP EISDIR EINVAL; do
        strace -f -qq -o "$T/trace" -P "$T/tmp" -P "$T/out/" -e trace=openat \
            -e inject=openat:error=$e "$RIFFLE" --seed=4 --memory=64K -T "$T/tmp" \
            -o "$T/out/o" "$T/in" 2> /dev/null
        cmp "$T/want" "$T/out/o"
        # both refusals happened: the bucket files' and the staging file's
        [ "$(grep -c "O_TMPFILE.*$e.*INJECTED" "$T/trace")" -eq 2 ]
        [ -z "$(ls -A "$T/tmp")" ]
        [ "$(ls -A "$T/out" | tr '\n' ' ')" = "o p0 " ]
        echo original > "$T/out/o"
    done
}
