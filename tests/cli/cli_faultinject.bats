#!/usr/bin/env bats
# Fault injection: a system call of riffle's made to fail with strace
# (-e inject=SYSCALL:error=ERRNO:when=N), in every mode that does I/O:
#   mem      input file, output to stdout
#   pipe     input from a pipe fed in two pieces (several reads), stdout
#   ext      --memory=64K -T DIR: the external shuffle, buckets in DIR
#   extpipe  ext, input from a pipe
#   out      -o FILE over an old FILE with known contents
#   extout   ext with -o FILE
#   split    --split=3 --output-pattern=DIR/p%d
# A failure must end with status 1, a message naming the file or operation,
# the old -o FILE intact, no .riffle-* temporary beside the outputs and an
# empty -T DIR.  EINTR on read/write/pread64/pwrite64 must be retried: the
# run succeeds with an exact permutation.  Every case checks in strace's log
# that the injection really happened, so that no case passes vacuously.
#
# N in when=N counts the calls of that syscall from the start, the dynamic
# loader's included: the cases that aim at a given call (the first input
# read, the open of bucket 5, ...) find its number in a clean traced run.
# Reads of a piped input are counted on the pipe alone (inject_stdin): the
# reads before the first vary in number under a sanitizer's runtime.

load ../lib/bg_jobs

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    # Faults are injected into calls on named temporaries (their names
    # select the call): the fallback path of file systems without O_TMPFILE.
    export RIFFLE_NAMED_TEMPS=1
    T="$BATS_TEST_TMPDIR"
    command -v strace > /dev/null || skip "strace not installed (scripts/deps.sh installs it)"
    # strace needs ptrace; a container may forbid it
    strace -qq -o /dev/null true 2> /dev/null || skip "strace cannot trace here"
    # LeakSanitizer cannot run under ptrace (a sanitizer build's exit check)
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
    seq 60000 > "$T/in"          # 349 KB
}

teardown() {
    bg_cleanup
}

# args_for MODE: riffle's arguments for MODE (in the work dir $W).
args_for() {
    case $1 in
    mem) A=(in) ;;
    pipe) A=() ;;
    ext) A=(--memory=64K -T tmp in) ;;
    extpipe) A=(--memory=64K -T tmp) ;;
    out) A=(-o old in) ;;
    extout) A=(--memory=64K -T tmp -o old in) ;;
    split) A=(--split=3 --output-pattern=parts/p%d in) ;;
    esac
}

# fresh: a new work dir $W with the input, an old -o file, -T and parts dirs.
fresh() {
    W=$(mktemp -d "$T/w.XXXXXX")
    cp "$T/in" "$W/in"
    # older than three seconds: riffle reads an input changed just before it
    # opened it once more at the end (riffle.1, a rewrite within the clock
    # tick), which would add calls after the ones counted here
    touch -d @1 "$W/in"
    seq 5 | sed 's/^/old /' > "$W/old"
    mkdir "$W/tmp" "$W/parts"
}

# feed MODE: the input on stdin for the pipe modes (two pieces, a pause
# between them so that riffle's reads usually return data twice), else
# nothing.  No verdict depends on the pause: the read after riffle's first
# read(0) is a read(0) whatever the pipe holds then, at worst the one that
# sees the end of the input.
feed() {
    case $1 in
    *pipe)
        head -c 100000 "$T/in"
        sleep 0.3
        tail -c +100001 "$T/in"
        ;;
    esac
}

# calls MODE SYSCALL: a clean traced run's SYSCALL calls, one a line, in order.
calls() {
    fresh
    args_for "$1"
    (cd "$W" && feed "$1" | timeout 60 strace -f -qq -o "$T/cal" -e trace="$2" \
        "$RIFFLE" --seed=1 "${A[@]}" > /dev/null)
    grep -v 'resumed>' "$T/cal" | sed 's/^[0-9]* *//'
}

# nth MODE SYSCALL ERE: the number (when=) of the first call matching ERE.
nth() {
    local n
    n=$(calls "$1" "$2" | grep -n -E -m 1 -- "$3" | cut -d: -f1)
    [ -n "$n" ] || { echo "no $2 call matches $3 in mode $1" >&2; return 1; }
    echo "$n"
}

# inject MODE SYSCALL ERRNO WHEN: run riffle in a fresh $W with the fault;
# RC, stderr in $W/.err, stdout in $W/.out, strace's log in $T/log.
inject() {
    local mode=$1 sc=$2 err=$3 when=$4
    fresh
    args_for "$mode"
    RC=0
    (cd "$W" && feed "$mode" | timeout 60 strace -f -qq -o "$T/log" -e trace="$sc" \
        -e inject="$sc:error=$err:when=$when" \
        "$RIFFLE" --seed=1 "${A[@]}" > "$W/.out" 2> "$W/.err") || RC=$?
    CASE="$mode $sc:error=$err:when=$when"
    if ! grep -q "INJECTED" "$T/log"; then
        echo "$CASE: nothing was injected" >&2
        return 1
    fi
}

# inject_stdin MODE ERRNO K: inject's fault at the K-th read of standard
# input alone.  The input comes through a FIFO and strace -P traces, and so
# counts, only the calls on that path: the reads before it (the loader's,
# and a sanitizer runtime's of /proc/self/maps, whose number varies from run
# to run) cannot shift K.
inject_stdin() {
    local mode=$1 err=$2 when=$3 feeder
    fresh
    args_for "$mode"
    mkfifo "$W/.fifo"
    feed "$mode" > "$W/.fifo" &
    feeder=$!
    RC=0
    (cd "$W" && timeout 60 strace -f -qq -o "$T/log" -P "$W/.fifo" -e trace=read \
        -e inject="read:error=$err:when=$when" \
        "$RIFFLE" --seed=1 "${A[@]}" < "$W/.fifo" > "$W/.out" 2> "$W/.err") || RC=$?
    wait "$feeder" 2> /dev/null || true # ends on EPIPE when riffle stopped reading
    rm -f "$W/.fifo"
    CASE="$mode stdin read $when:error=$err"
    if ! grep -q "INJECTED" "$T/log"; then
        echo "$CASE: nothing was injected" >&2
        return 1
    fi
}

# no_leftovers: no temporary beside the outputs, -T DIR empty.
no_leftovers() {
    local left
    left=$(ls -A "$W" "$W/parts" | grep '^\.riffle-' || true)
    [ -z "$left" ] || { echo "$CASE: temporary left: $left" >&2; return 1; }
    left=$(ls -A "$W/tmp")
    [ -z "$left" ] || { echo "$CASE: -T dir not empty: $left" >&2; return 1; }
}

# outputs MODE: everything the run output, in one stream.
outputs() {
    case $1 in
    out | extout) cat "$W/old" ;;
    split) cat "$W"/parts/p* 2> /dev/null || true ;;
    *) cat "$W/.out" ;;
    esac
}

# expect_ok MODE: status 0, no message, an exact permutation, no leftovers.
expect_ok() {
    [ "$RC" -eq 0 ] || { echo "$CASE: status $RC: $(cat "$W/.err")" >&2; return 1; }
    [ ! -s "$W/.err" ] || { echo "$CASE: stderr: $(cat "$W/.err")" >&2; return 1; }
    cmp <(outputs "$1" | sort) <(sort "$T/in") || { echo "$CASE: not a permutation" >&2; return 1; }
    [ "$1" != split ] || [ "$(ls "$W/parts" | wc -l)" -eq 3 ]
    no_leftovers
}

# expect_fail MODE ERE: status 1, a message matching ERE, no output taken
# for good (-o: the old file intact; split: only the parts the message says
# are in place), no leftovers.
expect_fail() {
    local mode=$1 ere=$2 placed
    [ "$RC" -eq 1 ] || { echo "$CASE: status $RC, want 1 (stderr: $(cat "$W/.err"))" >&2; return 1; }
    grep -q -E -- "$ere" "$W/.err" || { echo "$CASE: message '$(cat "$W/.err")' does not match '$ere'" >&2; return 1; }
    case $mode in
    out | extout)
        cmp "$W/old" <(seq 5 | sed 's/^/old /') || { echo "$CASE: old -o file changed" >&2; return 1; }
        ;;
    split)
        placed=$(sed -n 's/^riffle: \([0-9]*\) of 3 parts were already in place$/\1/p' "$W/.err")
        [ "$(ls "$W/parts" | wc -l)" -eq "${placed:-0}" ] ||
            { echo "$CASE: parts $(ls "$W/parts" | tr '\n' ' ') but message says ${placed:-0}" >&2; return 1; }
        ;;
    esac
    no_leftovers
}

strerr() {
    case $1 in
    EIO) echo "Input/output error" ;;
    ENOSPC) echo "No space left on device" ;;
    EAGAIN) echo "Resource temporarily unavailable" ;;
    EINTR) echo "Interrupted system call" ;;
    esac
}

@test "write to stdout or the outputs: EIO, ENOSPC, EAGAIN fail; EINTR is retried" {
    for mode in mem pipe ext out extout; do
        for e in EIO ENOSPC EAGAIN; do
            inject $mode write $e 1
            expect_fail $mode "^riffle: write error: $(strerr $e)\$"
        done
        inject $mode write EINTR 1
        expect_ok $mode
    done
    # split: each part's write, the second one mid-run
    n=$(calls split write | wc -l)
    [ "$n" -ge 2 ]
    for w in 1 2 $n; do
        inject split write EIO $w
        expect_fail split "^riffle: parts/p[0-2]: Input/output error\$"
        inject split write EINTR $w
        expect_ok split
    done
    inject split write ENOSPC 2
    expect_fail split "^riffle: parts/p1: No space left on device\$"
}

@test "read of a piped input: EIO, EAGAIN fail at the first and a later read; EINTR is retried" {
    for mode in pipe extpipe; do
        for w in 1 2; do
            for e in EIO EAGAIN; do
                inject_stdin $mode $e $w
                expect_fail $mode "^riffle: -: $(strerr $e)\$"
            done
            inject_stdin $mode EINTR $w
            expect_ok $mode
        done
    done
}

@test "pwrite64 of the buckets: EIO, ENOSPC fail early and mid-scatter; EINTR is retried" {
    for mode in ext extout; do
        n=$(calls $mode pwrite64 | wc -l)
        [ "$n" -ge 100 ]
        for w in 1 $((n / 2)) $n; do
            for e in EIO ENOSPC; do
                inject $mode pwrite64 $e $w
                expect_fail $mode "^riffle: tmp/riffle-[^/]+/[0-9]+: $(strerr $e)\$"
            done
            inject $mode pwrite64 EINTR $w
            expect_ok $mode
        done
    done
}

@test "pread64 of the buckets: EIO, EAGAIN fail; EINTR is retried" {
    for mode in ext extout; do
        # the loader's own pread64 calls come first: aim at riffle's
        first=$(($(strace -f -qq -o /dev/stdout -e trace=pread64 "$RIFFLE" --version 2> /dev/null | grep -c pread64) + 1))
        n=$(calls $mode pread64 | wc -l)
        [ "$n" -ge $((first + 10)) ]
        for w in $first $((first + 10)) $n; do
            for e in EIO EAGAIN; do
                inject $mode pread64 $e $w
                expect_fail $mode "^riffle: tmp/riffle-[^/]+/[0-9]+: $(strerr $e)\$"
            done
            inject $mode pread64 EINTR $w
            expect_ok $mode
        done
    done
}

@test "fsync of -o FILE and of the parts: EIO, ENOSPC fail" {
    for mode in out extout; do
        for e in EIO ENOSPC; do
            inject $mode fsync $e 1
            expect_fail $mode "^riffle: old: $(strerr $e)\$"
        done
    done
    n=$(calls split fsync | wc -l)
    [ "$n" -ge 3 ]
    for w in 1 2 $n; do
        inject split fsync EIO $w
        expect_fail split "^riffle: parts/p[0-2]: Input/output error\$"
    done
}

@test "rename of -o FILE and of the parts: EIO, ENOSPC fail, earlier parts reported" {
    for mode in out extout; do
        for e in EIO ENOSPC; do
            inject $mode rename $e 1
            expect_fail $mode "^riffle: old: $(strerr $e)\$"
        done
    done
    for w in 1 2 3; do
        inject split rename EIO $w
        expect_fail split "^riffle: parts/p$((w - 1)): Input/output error\$"
    done
    grep -q '^riffle: 2 of 3 parts were already in place$' "$W/.err"
}

@test "mkdir of the bucket directory (mkdtemp): EIO, ENOSPC fail" {
    for mode in ext extout; do
        for e in EIO ENOSPC; do
            inject $mode mkdir $e 1
            expect_fail $mode "^riffle: cannot create a temporary directory in tmp: $(strerr $e)\$"
        done
    done
}

@test "openat of a bucket, -o's temporary, a part, the input: EIO, ENOSPC fail" {
    for mode in ext extout; do
        for re in '"tmp/riffle-[^/]+/0"' '"tmp/riffle-[^/]+/20"'; do
            w=$(nth $mode openat "$re")
            inject $mode openat ENOSPC $w
            expect_fail $mode "^riffle: tmp/riffle-[^/]+/[0-9]+: No space left on device\$"
        done
        w=$(nth $mode openat '"in"')
        inject $mode openat EIO $w
        expect_fail $mode "^riffle: in: Input/output error\$"
    done
    w=$(nth extout openat '\.riffle-')
    inject extout openat EIO $w
    expect_fail extout "^riffle: old: Input/output error\$"
    w=$(nth out openat '\.riffle-')
    inject out openat ENOSPC $w
    expect_fail out "^riffle: old: No space left on device\$"
    w=$(nth split openat 'parts/\.riffle-')
    inject split openat EIO $w
    expect_fail split "^riffle: parts/p0: Input/output error\$"
    w=$(nth split openat '"in"')
    inject split openat EIO $w
    expect_fail split "^riffle: in: Input/output error\$"
}

@test "unlink of a bucket: a failed first removal is retried at cleanup" {
    for mode in ext extout; do
        for w in 1 10; do
            inject $mode unlink EIO $w
            expect_ok $mode
        done
    done
}

@test "unlink at the last cleanup pass, the file already gone: the run is not failed" {
    for mode in ext extout; do
        n=$(calls $mode unlink | wc -l)
        inject $mode unlink EIO $n
        expect_ok $mode
    done
}

@test "rmdir of the bucket directory: EIO fails, naming the directory left (empty)" {
    for mode in ext extout; do
        for e in EIO ENOSPC; do
            inject $mode rmdir $e 1
            [ "$RC" -eq 1 ]
            d=$(sed -n 's/^riffle: cannot remove the temporary directory \(.*\)$/\1/p' "$W/.err")
            [ -n "$d" ] && [ -d "$W/$d" ]
            # the one thing left is that directory, emptied
            [ "$(ls -A "$W/tmp")" = "${d#tmp/}" ]
            [ -z "$(ls -A "$W/$d")" ]
            [ "$mode" = ext ] || cmp "$W/old" <(seq 5 | sed 's/^/old /')
            [ -z "$(ls -A "$W" | grep '^\.riffle-' || true)" ]
        done
    done
}

@test "EINTR on the metadata calls: a clean failure or a success, never a half state" {
    # openat, mkdir, fsync, rename, rmdir are not retried by riffle (an
    # EINTR there is a failure, reported): either outcome must be clean
    for c in "out openat .riffle-" "extout mkdir" "split fsync" "out fsync" "split rename" \
             "out rename" "ext openat tmp/riffle-[^/]+/5\"" ; do
        set -- $c
        w=1
        [ -z "${3:-}" ] || w=$(nth "$1" "$2" "$3")
        inject "$1" "$2" EINTR "$w"
        if [ "$RC" -eq 0 ]; then
            expect_ok "$1"
        else
            expect_fail "$1" "^riffle: .*Interrupted system call\$"
        fi
    done
}
