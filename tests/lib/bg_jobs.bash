# bg_jobs.bash -- background processes in bats tests, without races.
# Load with `load ../lib/bg_jobs` and call bg_cleanup from teardown.
#
#  - Wait in the test's own shell: bats' `run` executes its command in a
#    subshell, and a subshell cannot wait for the parent's background job
#    (`run wait $pid` returns at once with status 127), so nothing is waited
#    for and the checks race the process.  bg_reap waits here, bounded.
#  - Signal a process when it has reached the phase under test (a file it
#    makes, a progress line), found by polling with a bound (wait_until), never
#    after a fixed sleep, which a loaded machine outlasts.
#  - A job to be signalled starts through default_signals.
#  - Every job is started with fd 3 closed (bats waits for it) and recorded in
#    BG_PIDS, so that a failing test leaves no process behind.

BG_PIDS=()

# bg_track PID: kill PID at teardown if it is still there.
bg_track() {
    BG_PIDS+=("$1")
}

# bg_cleanup: SIGKILL whatever bg_track recorded and is still running.
bg_cleanup() {
    local p
    for p in "${BG_PIDS[@]}"; do
        kill -KILL "$p" 2> /dev/null || true
    done
    BG_PIDS=()
}

# default_signals COMMAND [ARG...]: exec COMMAND with the signals the tests
# send (HUP, INT, QUIT, PIPE, ALRM, TERM, USR1, USR2, XCPU, XFSZ, VTALRM,
# PROF, RTMIN+1) at their default action, and no core file for the ones that dump
# one; start it in the background for its pid:
#     default_signals "$RIFFLE" ... 3>&- &
# A non-interactive shell starts background jobs with SIGINT and SIGQUIT
# ignored, and a shell that was itself started with a signal ignored (by
# nohup, or as a background job: a CI step, a loop of runs) cannot take the
# ignore back, not even with `set -m`; riffle, as shuf, leaves ignored
# signals ignored.
default_signals() {
    ulimit -c 0
    if env --default-signal=INT true 2> /dev/null; then
        exec env --default-signal=INT,TERM,HUP,QUIT,USR1,USR2,ALRM,PIPE,XCPU,XFSZ,VTALRM,PROF,RTMIN+1 "$@"
    fi
    exec python3 -c 'import os, signal, sys
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT,
          signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM, signal.SIGPIPE,
          signal.SIGXCPU, signal.SIGXFSZ, signal.SIGVTALRM, signal.SIGPROF,
          signal.SIGRTMIN + 1):
    signal.signal(s, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' "$@"
}

# wait_until SECONDS COMMAND [ARG...]: run COMMAND every 50 ms until it
# succeeds (status 0), for SECONDS at most (then status 1).
wait_until() {
    local limit=$1
    shift
    local end=$((SECONDS + limit + 1))
    until "$@"; do
        [ "$SECONDS" -lt "$end" ] || return 1
        sleep 0.05
    done
}

# Whether process PID has ended (gone, or a zombie not yet reaped).
bg_ended() {
    kill -0 "$1" 2> /dev/null || return 0
    local stat
    stat=$(cat "/proc/$1/stat" 2> /dev/null) || return 0
    stat=${stat##*) }
    [ "${stat%% *}" = Z ]
}

# bg_reap PID [SECONDS]: wait for this shell's background job PID, SECONDS at
# most (default 60), and set BG_STATUS to its exit status (128 + N for death by
# signal N).  If it is still running then, it is killed (SIGKILL), BG_STATUS
# is "timeout" and the status is 1.
bg_reap() {
    local pid=$1 limit=${2:-60}
    BG_STATUS=0
    if ! wait_until "$limit" bg_ended "$pid"; then
        kill -KILL "$pid" 2> /dev/null || true
        wait "$pid" 2> /dev/null || true
        BG_STATUS=timeout
        echo "# process $pid still running after ${limit}s: killed" >&2
        return 1
    fi
    wait "$pid" || BG_STATUS=$?
}

# Phases of riffle to wait for.

# temp_growing DIR: DIR holds a non-empty temporary file of -o or --split
# (.riffle-*).
temp_growing() {
    local tmp
    tmp=$(ls -A "$1" | grep '^\.riffle-' | head -n 1 || true)
    [ -n "$tmp" ] && [ -s "$1/$tmp" ]
}

# buckets_exist DIR: DIR (riffle's -T) holds a bucket directory with files in
# it: an external run is scattering or past it.
buckets_exist() {
    local d
    d=$(ls -A "$1" | head -n 1)
    [ -n "$d" ] && [ -n "$(ls -A "$1/$d" 2> /dev/null)" ]
}

# scattering: the progress line in $T/err shows the scatter phase and the
# bucket files exist in $T/tmp.
scattering() {
    grep -q 'scatter' "$T/err" && buckets_exist "$T/tmp"
}

# signal_scattering SIG FEED: an external run of riffle (--memory=2K, buckets
# in $T/tmp, -o $T/out) reads FEED through a FIFO the test holds open
# (fd 8), so that, having scattered what it was given, it waits in its
# scatter phase for more.  SIG goes when `scattering` holds; riffle is then
# waited for in this shell, bounded.  Sets BG_STATUS to riffle's status.
signal_scattering() {
    local sig=$1 feed=$2 pid feeder st
    [ -p "$T/fifo" ] || mkfifo "$T/fifo"
    : > "$T/err"
    exec 8<> "$T/fifo"
    RIFFLE_PROGRESS_DELAY_MS=0 default_signals "$RIFFLE" --progress --memory=2K -T "$T/tmp" \
        -o "$T/out" < "$T/fifo" 2> "$T/err" 8>&- 3>&- &
    pid=$!
    bg_track "$pid"
    cat "$feed" > "$T/fifo" 8>&- 3>&- &   # more than a pipe holds
    feeder=$!
    bg_track "$feeder"
    wait_until 60 scattering
    kill -s "$sig" "$pid"
    bg_reap "$pid"
    st=$BG_STATUS
    exec 8>&-              # no reader left: the feeder, if blocked, ends
    bg_reap "$feeder"
    BG_STATUS=$st
}
