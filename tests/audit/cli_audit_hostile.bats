#!/usr/bin/env bats
# `riffle audit --cmd` against hostile commands: hanging, flooding, signalling,
# leaving processes behind; exec errors; TMPDIR; verdicts that need evidence
# ("inconclusive", never "fair" for identical trials); bounded budgets; output
# hygiene (JSON checked by a real parser).  Every wait is bounded (`timeout`,
# wait_until, bg_reap); processes of trials are found by a marker unique to
# the test: programs linked into the test's own directory.

load ../lib/bg_jobs
load ../lib/audit_setup

setup() {
    audit_setup
    PY=/usr/bin/python3
    mkdir -p "$T/tmp"
    export TMPDIR="$T/tmp"
    # Marked programs: their command lines hold $T, so pgrep -f finds them.
    ln -s "$(command -v sleep)" "$T/marker-sleep"
    ln -s "$(command -v tail)" "$T/marker-tail"
}

teardown() {
    bg_cleanup
    local p
    for p in $(pgrep -f "$T/marker"); do kill -KILL "$p" 2> /dev/null || true; done
}

# No process of a trial is left.
no_marked_process() {
    ! pgrep -f "$T/marker" > /dev/null
}

@test "a hanging command is killed at --timeout: broken, no process left" {
    run timeout 60 "$RIFFLE" audit --cmd="$T/marker-sleep 1000" --timeout=0.3 --trials=10
    [ "$status" -eq 2 ]
    [[ "$output" == *"timed out after 0.3 s (killed)"* ]]
    [[ "$output" == *"verdict: broken"* ]]
    no_marked_process
    [ -z "$(ls -A "$T/tmp")" ]
}

@test "a command reading stdin forever is killed at --timeout" {
    run timeout 60 "$RIFFLE" audit --cmd="$T/marker-tail -f" --timeout=0.3 --trials=4
    [ "$status" -eq 2 ]
    [[ "$output" == *"timed out"* ]]
    no_marked_process
}

@test "an endless writer (yes) is stopped at the output limit, nothing on disk" {
    run timeout 60 "$RIFFLE" audit --cmd=yes --trials=5
    [ "$status" -eq 2 ]
    [[ "$output" == *"more than 4096 bytes of output (killed)"* ]]
    [[ "$output" == *"killed: 0 trials at the timeout, 5 over the output limit"* ]]
    run timeout 60 "$RIFFLE" audit --cmd=yes --trials=3 --max-output=100 --json
    [ "$status" -eq 2 ]
    [[ "$output" == *'"max_output": 100,'* ]]
    [[ "$output" == *'"over_output": 3}'* ]]
    [ -z "$(ls -A "$T/tmp")" ]
}

# A trial's stderr is a pipe: bounded, escaped, shown for the first broken
# trial only.
@test "a trial's stderr cannot flood riffle's or reach the terminal raw" {
    run timeout 60 bash -c '"$0" audit --cmd="sh -c '"'"'yes >&2'"'"'" --trials=5 2> "$1"' \
        "$RIFFLE" "$T/err"
    [ "$status" -eq 2 ]
    [[ "$output" == *"killed: 0 trials at the timeout, 5 over the output limit"* ]]
    [ "$(wc -c < "$T/err")" -lt 2000 ]
    # (trials run several at a time, one per CPU: which is judged first is not known)
    [ "$(grep -c '^riffle: audit: trial [1-5] stderr: y$' "$T/err")" -eq 16 ]
    grep -q '^riffle: audit: trial [1-5] stderr: ([0-9]* more bytes not shown)$' "$T/err"
    [ "$(cut -d: -f3 "$T/err" | sort -u | wc -l)" -eq 1 ]
    printf '#!/bin/sh\nprintf "\\033]0;pwned\\007\\033[2J\\001\\377\\n" >&2\nexit 3\n' > "$T/noisy"
    chmod +x "$T/noisy"
    run timeout 60 bash -c '"$0" audit --cmd="$1" --trials=4 2> "$2"' "$RIFFLE" "$T/noisy" "$T/err"
    [ "$status" -eq 2 ]
    [[ "$output" == *"exit status 3"* ]]
    [[ "$(cat "$T/err")" == 'riffle: audit: trial '[1-4]' stderr: \x1b]0;pwned\x07\x1b[2J\x01\xff' ]]
    # A trial that is not broken: its stderr is dropped.
    run timeout 60 bash -c '"$0" audit --cmd="sh -c '"'"'echo note >&2; cat'"'"'" --trials=4 2> "$1"' \
        "$RIFFLE" "$T/err"
    [ "$status" -eq 2 ] || [ "$status" -eq 3 ]
    [ ! -s "$T/err" ]
    run timeout 60 bash -c '"$0" audit --cmd="no-such-program-$$ < /dev/null" --trials=3 2> "$1"' \
        "$RIFFLE" "$T/err"
    [ "$status" -eq 1 ]
    [ "$(grep -c 'stderr: .*no-such-program-.*not found' "$T/err")" -eq 1 ]
}

@test "a trial that signals its process group (kill 0) cannot kill riffle" {
    run timeout 60 "$RIFFLE" audit --cmd="sh -c 'kill -TERM 0; cat'" --trials=4
    [ "$status" -eq 2 ]
    [[ "$output" == *"killed by signal 15"* ]]
}

# A trial leads a session of its own: it cannot join riffle's process group
# (and then `kill 0` it), since a group is joined only within its session.
@test "a trial runs in its own session and cannot join riffle's group" {
    cat > "$T/joiner" << 'EOF'
import os, sys
try:
    os.setpgid(0, os.getpgid(os.getppid()))
    r = "joined"
except OSError as e:
    r = os.strerror(e.errno)
with open(sys.argv[1], "w") as f:
    f.write("%s, session leader %s\n" % (r, os.getsid(0) == os.getpid()))
sys.stdout.write(sys.stdin.read())
EOF
    run timeout 60 "$RIFFLE" audit --cmd="$PY $T/joiner $T/joined" --trials=2
    [ "$status" -eq 3 ]
    [ "$(cat "$T/joined")" = "Operation not permitted, session leader True" ]
}

@test "background and setsid children of a trial do not outlive the audit" {
    # (stderr to /dev/null: a survivor must not hold the output of `run` open,
    # or a regression would hang the test instead of failing it)
    cat > "$T/spawner" << EOF
#!/bin/sh
exec 2> /dev/null
"$T/marker-sleep" 1001 &
setsid "$T/marker-sleep" 1002 &
sh -c 'setsid "$T/marker-sleep" 1003 & exec "$T/marker-sleep" 1004' &
cat
EOF
    chmod +x "$T/spawner"
    run timeout 60 "$RIFFLE" audit --cmd="$T/spawner" --n=3 --trials=12
    [ "$status" -ne 1 ]
    [[ "$output" == *"verdict: "* ]]
    no_marked_process
}

# The trial reports that its processes exist by making a file; riffle is
# signalled then, and must kill the trial's group and its setsid escapee.
@test "a signal to riffle kills the running trials and removes its files" {
    cat > "$T/slow" << EOF
#!/bin/sh
exec 2> /dev/null
setsid "$T/marker-sleep" 1005 &
"$T/marker-sleep" 1006 &
: > "$T/started"
wait
EOF
    chmod +x "$T/slow"
    default_signals "$RIFFLE" audit --cmd="$T/slow" --trials=5 --jobs=1 > /dev/null 3>&- &
    pid=$!
    bg_track "$pid"
    wait_until 60 test -e "$T/started"
    wait_until 60 eval '[ "$(pgrep -fc "$T/marker-sleep")" -eq 2 ]'
    kill -TERM "$pid"
    bg_reap "$pid"
    [ "$BG_STATUS" -eq 143 ]
    wait_until 10 no_marked_process
    [ -z "$(ls -A "$T/tmp")" ]
}

# The audit handles every terminating signal riffle does (riffle.1, SIGNALS),
# not only the usual few: for each, a running trial is killed, the temporary
# directory removed, and riffle dies of the signal.
@test "XCPU, VTALRM and a real-time signal to the audit: trials killed, files removed" {
    # (through a script: riffle's own command line must not hold the marker)
    printf '#!/bin/sh\nexec "%s" 30\n' "$T/marker-sleep" > "$T/trial"
    chmod +x "$T/trial"
    for sig in XCPU VTALRM RTMIN+1; do
        default_signals "$RIFFLE" audit --cmd="$T/trial" --trials=5 --jobs=1 \
            > /dev/null 2>&1 3>&- &
        pid=$!
        bg_track "$pid"
        wait_until 60 eval '[ "$(pgrep -fc "$T/marker-sleep")" -eq 1 ]'
        [ -n "$(ls -A "$T/tmp")" ] # riffle-audit.*, holding the input
        kill -s "$sig" "$pid"
        bg_reap "$pid"
        echo "$sig: status $BG_STATUS"
        [ "$BG_STATUS" -eq $((128 + $(kill -l "$sig"))) ]
        wait_until 10 no_marked_process
        [ -z "$(ls -A "$T/tmp")" ]
    done
}

@test "SIGCHLD ignored by riffle's parent: trials still run and are judged" {
    # (the shuffler is not seeded: --alpha=1e-6 keeps a false alarm at odds
    # of about one in a million)
    run timeout 120 bash -c 'trap "" CHLD; exec "$0" audit --cmd="$0 audit --as-shuffler=fisher-yates" --n=4 --trials=500 --alpha=1e-6' "$RIFFLE"
    [ "$status" -eq 0 ]
    [[ "$output" == *"verdict: fair"* ]]
}

@test "commands that cannot run: the message names the cause" {
    run "$RIFFLE" audit --cmd='   ' --trials=3
    [ "$status" -eq 1 ]
    [[ "$output" == *"empty command"* ]]
    run "$RIFFLE" audit --cmd=/etc/passwd --trials=3
    [ "$status" -eq 1 ]
    [[ "$output" == *"cannot run '/etc/passwd': Permission denied"* ]]
    run "$RIFFLE" audit --cmd="$T/no-such-program" --trials=3
    [ "$status" -eq 1 ]
    [[ "$output" == *"No such file or directory"* ]]
    printf 'not a program\n' > "$T/garbage"
    chmod +x "$T/garbage"
    run "$RIFFLE" audit --cmd="$T/garbage" --trials=3
    [ "$status" -eq 1 ]
    [[ "$output" == *"Exec format error"* ]]
    run "$RIFFLE" audit --cmd="no-such-program-$$ < /dev/null" --trials=3
    [ "$status" -eq 1 ]
    [[ "$output" == *"the shell could not find it (exit status 127)"* ]]
}

@test "a long TMPDIR is used as it is; an unusable one is an error" {
    long="$T/tmp/$(printf 'd%.0s' $(seq 120))"
    mkdir -p "$long"
    printf '#!/bin/sh\nreadlink /proc/$$/fd/0 > "%s/stdin-was"\ncat\n' "$T" > "$T/where"
    chmod +x "$T/where"
    TMPDIR="$long" run "$RIFFLE" audit --cmd="$T/where" --trials=2
    [ "$status" -ne 1 ]
    [[ "$(cat "$T/stdin-was")" == "$long/riffle-audit."*/input ]]
    [ -z "$(ls -A "$long")" ]
    TMPDIR="$T/none" run timeout 20 "$RIFFLE" audit --cmd=cat --trials=2
    [ "$status" -eq 1 ]
    [[ "$output" == *"cannot make a temporary directory in '$T/none' (TMPDIR): No such file or directory"* ]]
}

@test "identical trials are never fair; too few to tell is inconclusive (exit 3)" {
    for t in $(seq 1 20); do
        run timeout 20 "$RIFFLE" audit --cmd=cat --trials="$t"
        [ "$status" -eq 2 ] || [ "$status" -eq 3 ]
    done
    run timeout 20 "$RIFFLE" audit --cmd=cat --trials=2
    [ "$status" -eq 3 ]
    [[ "$output" == *"verdict: inconclusive -- all 2 trials at n = 6 gave the same ordering; about --trials="*" per size would decide"* ]]
    run "$RIFFLE" audit --cmd=cat --trials=9
    [ "$status" -eq 2 ]
    [[ "$output" == *"all 9 trials at n = 6 gave the same ordering"* ]]
    # One card: every trial is necessarily the same; nothing can be tested.
    run "$RIFFLE" audit --cmd=cat --n=1 --trials=50
    [ "$status" -eq 3 ]
    [[ "$output" == *"verdict: inconclusive -- n = 1 has a single ordering"* ]]
    run "$RIFFLE" audit fisher-yates --n=1 --seed=1
    [ "$status" -eq 3 ]
}

@test "inconclusive: a fair shuffler with too few trials, stated in text and JSON" {
    run "$RIFFLE" audit fisher-yates --n=6 --trials=30 --seed=1
    [ "$status" -eq 3 ]
    [[ "$output" == *"verdict: inconclusive"* ]]
    [[ "$output" == *"smallest deviation these trials could find: w = "* ]]
    run "$RIFFLE" audit fisher-yates --n=6 --trials=30 --seed=1 --json
    [ "$status" -eq 3 ]
    printf '%s\n' "$output" | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
assert d["verdict"] == "inconclusive" and d["exit_status"] == 3, d["verdict"]
p = d["power"]
assert p["probability"] == 0.9 and p["promised_w"] == 0.25, p
assert p["trials_to_decide"] > 30, p
ws = [t["detectable_w"] for t in d["sizes"][0]["statistical"]["tests"]
      if t["detectable_w"] is not None]
assert ws and min(ws) > 0.25, ws'
    run "$RIFFLE" audit fisher-yates --n=6 --trials=20000 --seed=1 --json
    [ "$status" -eq 0 ]
    printf '%s\n' "$output" | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
ws = [t["detectable_w"] for t in d["sizes"][0]["statistical"]["tests"]
      if t["detectable_w"] is not None]
assert d["verdict"] == "fair" and min(ws) <= 0.25, ws'
}

@test "--max-trials 1..20 each ends with a verdict" {
    for m in $(seq 1 20); do
        run timeout 60 "$RIFFLE" audit fisher-yates --max-trials="$m" --seed=1
        [ "$status" -eq 3 ]
        [[ "$output" == *"verdict: inconclusive"* ]]
    done
    for m in 1 2 3 4 5; do
        run timeout 60 "$RIFFLE" audit --cmd=cat --max-trials="$m"
        [ "$status" -eq 2 ] || [ "$status" -eq 3 ]
        [[ "$output" == *"verdict: "* ]]
    done
}

# 39 ASCII bytes then a 2-byte character: the 40-byte excerpt must stop before
# it; an escape sequence, a control byte and a byte that is not UTF-8 follow.
@test "a bad line's excerpt: cut at a character, escaped on a terminal, valid JSON" {
    printf '#!/bin/sh\nprintf "%%s\\303\\251\\033[31m\\001\\377\\n" %s\n' \
        "$(printf 'a%.0s' $(seq 39))" > "$T/bad"
    chmod +x "$T/bad"
    run "$RIFFLE" audit --cmd="$T/bad" --trials=2 --json
    [ "$status" -eq 2 ]
    printf '%s\n' "$output" | "$PY" -c '
import json, sys
d = json.loads(sys.stdin.buffer.read().decode("utf-8", "strict"))
ex = d["command"]["example"]
assert ex.endswith("line \x27" + "a" * 39 + "\x27"), ex'
    printf '#!/bin/sh\nprintf "\\033[31m\\001\\377\\303\\251\\n"\n' > "$T/esc"
    chmod +x "$T/esc"
    run "$RIFFLE" audit --cmd="$T/esc" --trials=2
    [ "$status" -eq 2 ]
    [[ "$output" == *"line '\\x1b[31m\\x01\\xff"$'\xc3\xa9'"'"* ]]
    [[ "$output" != *$'\033'* ]]
    run "$RIFFLE" audit --cmd="$T/esc" --trials=2 --json
    printf '%s\n' "$output" | "$PY" -c '
import json, sys
d = json.loads(sys.stdin.buffer.read().decode("utf-8", "strict"))
assert "\x1b[31m\x01\ufffd\u00e9" in d["command"]["example"], d["command"]["example"]'
}

# The first trial to end is always reported (later ones at most once a
# second), so the progress line does not depend on how fast trials run; the
# time limit is certain to cut 100000 trials of 50 ms.  Any verdict a cut run
# can give is accepted: which trials were gathered depends on the machine.
@test "--progress reports trials on stderr; --time-limit ends a long audit" {
    run timeout 60 "$RIFFLE" audit --cmd=cat --trials=20 --progress
    [ "$status" -eq 2 ]
    [[ "$output" == *"riffle: audit: n = 6, 1 trials done, next look after 20 (in ~"* ]]
    run timeout 60 "$RIFFLE" audit --cmd="sh -c 'sleep 0.05; cat'" --trials=100000 \
        --time-limit=1
    [ "$status" -eq 0 ] || [ "$status" -eq 2 ] || [ "$status" -eq 3 ]
    [[ "$output" == *"time limit: 1 s reached; judged on the trials gathered"* ]]
    [[ "$output" == *"verdict: "* ]]
}

@test "--time-limit also ends a long in-process audit" {
    run timeout 60 "$RIFFLE" audit fisher-yates --n=6 --trials=100000000000 \
        --time-limit=0.5 --seed=1
    [ "$status" -eq 0 ] || [ "$status" -eq 2 ] || [ "$status" -eq 3 ]
    [[ "$output" == *"time limit: 0.5 s reached; judged on the trials gathered"* ]]
    [[ "$output" == *"verdict: "* ]]
}

@test "the limits are options of --cmd, checked" {
    run "$RIFFLE" audit fisher-yates --timeout=1
    [ "$status" -eq 1 ]
    run "$RIFFLE" audit --cmd=cat --timeout=0
    [ "$status" -eq 1 ]
    run "$RIFFLE" audit --cmd=cat --max-output=0
    [ "$status" -eq 1 ]
    run "$RIFFLE" audit --cmd=cat --time-limit=-1
    [ "$status" -eq 1 ]
    run "$RIFFLE" audit --help
    [[ "$output" == *"--timeout=SECONDS"* ]]
    [[ "$output" == *"3"*"inconclusive"* ]]
}

@test "the timeout in force is reported: derived from the first trials, or given" {
    run "$RIFFLE" audit --cmd="$RIFFLE audit --as-shuffler=fisher-yates" --n=4 \
        --trials=12 --json
    [ "$status" -ne 1 ]
    # (the derived value is max(10 s, 20 x the slowest of the first trials):
    # at least 10, more on a loaded machine)
    printf '%s\n' "$output" | "$PY" -c '
import json, sys
c = json.load(sys.stdin)["command"]
assert c["timeout_derived"] is True and c["timeout_s"] >= 10, c
assert c["max_output"] == 4096, c'
    run "$RIFFLE" audit --cmd="$RIFFLE audit --as-shuffler=fisher-yates" --n=4 \
        --trials=12 --timeout=3.5
    [ "$status" -ne 1 ]
    [[ "$output" == *"timeout 3.5 s (--timeout); output limit 4096 bytes"* ]]
}
