#!/usr/bin/env bats
# An input that changes while riffle uses it fails the run: exit 1,
# "riffle: FILE: file changed as we read it", the -o target left as it was,
# nothing temporary left.  A regular file is mapped, so a cut inside its last
# page would read as zeros and a rewrite at the same size would mix old and
# new records -- neither raises a signal; riffle compares each input's size,
# modification and change time at the end with what they were when it
# opened it, and a hash of its bytes when it grew.  A file that only grew
# (a log appended to) is a snapshot: exit 0, the output that of the bytes
# riffle read, as with GNU shuf.
#
# No timing: riffle reads FILE, then a FIFO as its second input, and the
# test's opening of the FIFO for writing returns only once riffle has opened
# it for reading -- that is, once FILE has been read.  FILE is changed then,
# and the FIFO closed.
#
# Nor clock resolution: the file's times are only as fine as the kernel's
# clock for them (a tick of 1-10 ms before Linux 6.13), so a rewrite a few
# milliseconds after the file was made can leave its modification and change
# times as they were.  FILE is backdated (its mtime set to 1970) before the
# run, so that any write to it during the run moves its mtime.

load ../lib/bg_jobs

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
    mkdir -p "$T/tmp"
    mkfifo "$T/fifo"
}

teardown() {
    bg_cleanup
}

# change_during ENGINE_ARGS CHANGE: run riffle over $T/in and the FIFO with
# -o $T/out, apply CHANGE (a shell command) to $T/in between the two, and
# leave the status in BG_STATUS and stderr in $T/err.
change_during() {
    local args=$1 change=$2 pid
    awk 'BEGIN { for (i = 1; i <= 3000; i++) print "record " i }' > "$T/in"
    touch -d @1 "$T/in"
    echo original > "$T/out"
    "$RIFFLE" --seed=1 $args -o "$T/out" "$T/in" "$T/fifo" 2> "$T/err" 3>&- &
    pid=$!
    bg_track "$pid"
    exec 9> "$T/fifo"      # returns once riffle has read $T/in and opened this
    eval "$change"
    echo last >&9
    exec 9>&-
    bg_reap "$pid"
}

engines() {
    printf '%s\n' "" "--memory=16K -T $T/tmp" "-n 5" "-r -n 5"
}

@test "an input cut inside its last page: the run fails, -o untouched" {
    engines | while read -r e; do
        change_during "$e" 'truncate -s -40 "$T/in"'
        [ "$BG_STATUS" -eq 1 ]
        [ "$(cat "$T/err")" = "riffle: $T/in: file changed as we read it" ]
        [ "$(cat "$T/out")" = original ]
        [ -z "$(ls -A "$T/tmp")" ]
        [ -z "$(ls -A "$T" | grep '^\.riffle-' || true)" ]
    done
}

@test "an input rewritten in place at the same size: the run fails, -o untouched" {
    engines | while read -r e; do
        change_during "$e" 'printf "RECORD 1" | dd of="$T/in" conv=notrunc status=none'
        [ "$BG_STATUS" -eq 1 ]
        [ "$(cat "$T/err")" = "riffle: $T/in: file changed as we read it" ]
        [ "$(cat "$T/out")" = original ]
        [ -z "$(ls -A "$T/tmp")" ]
    done
}

@test "an input left alone, or replaced by a new file under its name: the run succeeds" {
    engines | while read -r e; do
        change_during "$e" ':'
        [ "$BG_STATUS" -eq 0 ]
        change_during "$e" 'cp "$T/in" "$T/new" && mv "$T/new" "$T/in"'
        [ "$BG_STATUS" -eq 0 ]   # riffle read the file it opened, whole
        [ "$(grep -c . "$T/out")" -eq "$(case $e in *"-n 5") echo 5 ;; *) echo 3001 ;; esac)" ]
    done
}

# -r with one input file, which is mapped: the change comes while riffle
# writes to a pipe the test has stopped reading (36 MB to write, far more
# than a pipe and riffle's buffer hold), so it cannot have finished.
@test "-r over a sole mapped input that changes while it is written: the run fails" {
    local pid change
    mkfifo "$T/ofifo"
    for change in 'truncate -s -40 "$T/in"' \
                  'printf "RECORD 1" | dd of="$T/in" conv=notrunc status=none'; do
        awk 'BEGIN { for (i = 1; i <= 3000; i++) print "record " i }' > "$T/in"
        touch -d @1 "$T/in"
        "$RIFFLE" --seed=1 -r -n 3000000 "$T/in" > "$T/ofifo" 2> "$T/err" 3>&- &
        pid=$!
        bg_track "$pid"
        exec 9< "$T/ofifo"
        head -c 1 <&9 > /dev/null   # riffle is writing: it has read and stamped $T/in
        eval "$change"
        cat <&9 > /dev/null
        exec 9<&-
        bg_reap "$pid"
        [ "$BG_STATUS" -eq 1 ]
        [ "$(cat "$T/err")" = "riffle: $T/in: file changed as we read it" ]
    done
}

# expected ENGINE_ARGS: what the run prints for the input as it was opened
# (3000 records, then the FIFO's "last"), from a copy of it.
expected() {
    awk 'BEGIN { for (i = 1; i <= 3000; i++) print "record " i }' > "$T/in.orig"
    echo last > "$T/last"
    "$RIFFLE" --seed=1 $1 "$T/in.orig" "$T/last"
}

@test "an input appended to, as a log is: a snapshot, the shuffle of the bytes opened" {
    engines | while read -r e; do
        change_during "$e" 'echo "record 3001" >> "$T/in"; echo "record 3002" >> "$T/in"'
        [ "$BG_STATUS" -eq 0 ]
        [ ! -s "$T/err" ]
        cmp "$T/out" <(expected "$e")
        [ "$(grep -c . "$T/in")" -eq 3002 ]   # the append happened
        [ -z "$(ls -A "$T/tmp")" ]
    done
}

@test "an input appended to, on standard output: exit 0 and the snapshot" {
    local pid
    for e in "-n 100" "" "--memory=16K -T $T/tmp"; do
        awk 'BEGIN { for (i = 1; i <= 3000; i++) print "record " i }' > "$T/in"
        "$RIFFLE" --seed=1 $e "$T/in" "$T/fifo" > "$T/out" 2> "$T/err" 3>&- &
        pid=$!
        bg_track "$pid"
        exec 9> "$T/fifo"
        printf 'appended %d\n' 1 2 3 >> "$T/in"
        echo last >&9
        exec 9>&-
        bg_reap "$pid"
        [ "$BG_STATUS" -eq 0 ]
        [ ! -s "$T/err" ]
        cmp "$T/out" <(expected "$e")
    done
}

@test "an input truncated and rewritten longer: the run fails, -o untouched" {
    # the same records behind a new first one: longer, the bytes read moved
    engines | while read -r e; do
        change_during "$e" 'cp "$T/in" "$T/in.copy"; { echo "record 0"; cat "$T/in.copy"; } > "$T/in"'
        [ "$BG_STATUS" -eq 1 ]
        # in memory, the mapped file is copied into the records' buffer when
        # the FIFO opens, and that copy may meet the truncation (SIGBUS)
        [ "$(cat "$T/err")" = "riffle: $T/in: file changed as we read it" ] ||
            { [ -z "$e" ] &&
              [ "$(cat "$T/err")" = "riffle: bus error: an input file shrank while being read" ]; }
        [ "$(cat "$T/out")" = original ]
        [ -z "$(ls -A "$T/tmp")" ]
    done
}

@test "an input rewritten in place and then appended to: the run fails, -o untouched" {
    engines | while read -r e; do
        change_during "$e" 'printf "RECORD 1" | dd of="$T/in" conv=notrunc status=none; echo more >> "$T/in"'
        [ "$BG_STATUS" -eq 1 ]
        [ "$(cat "$T/err")" = "riffle: $T/in: file changed as we read it" ]
        [ "$(cat "$T/out")" = original ]
        [ -z "$(ls -A "$T/tmp")" ]
    done
}

@test "-r over a sole mapped input appended to while it is written: exit 0" {
    local pid
    mkfifo "$T/ofifo"
    awk 'BEGIN { for (i = 1; i <= 3000; i++) print "record " i }' > "$T/in"
    "$RIFFLE" --seed=1 -r -n 3000000 "$T/in" > "$T/ofifo" 2> "$T/err" 3>&- &
    pid=$!
    bg_track "$pid"
    exec 9< "$T/ofifo"
    dd bs=1 count=1 status=none <&9 > /dev/null   # riffle is writing: it has read and stamped $T/in
    echo appended >> "$T/in"
    cat <&9 > "$T/out"
    exec 9<&-
    bg_reap "$pid"
    [ "$BG_STATUS" -eq 0 ]
    [ ! -s "$T/err" ]
    ! grep -q appended "$T/out"
    [ "$(wc -l < "$T/out")" -eq 3000000 ]   # all but the first byte, read by dd
}

# slow_sink ENGINE_ARGS CHANGE: riffle over $T/big alone -- the one input,
# mapped and hashed while its records are counted (in memory) or walked (the
# external engine's scatter) -- writing to a FIFO the test reads.  Once the
# first byte is out, riffle has read its whole input; it cannot end before
# the test has read the rest (more than a pipe holds), so CHANGE comes
# between the two, and before riffle's last look at its input.
slow_sink() {
    local args=$1 change=$2 pid
    awk 'BEGIN { for (i = 1; i <= 200000; i++) print "record " i }' > "$T/big"
    touch -d @1 "$T/big"
    cp "$T/big" "$T/big.orig"
    mkfifo "$T/ofifo"
    "$RIFFLE" --seed=1 $args "$T/big" > "$T/ofifo" 2> "$T/err" 3>&- &
    pid=$!
    bg_track "$pid"
    exec 9< "$T/ofifo"
    dd bs=1 count=1 status=none <&9 > "$T/out"
    eval "$change"
    cat <&9 >> "$T/out"
    exec 9<&-
    rm "$T/ofifo"
    bg_reap "$pid"
}

@test "a sole input appended to while the output is written: the snapshot, in memory and external" {
    for e in "" "--memory=64K -T $T/tmp"; do
        slow_sink "$e" 'printf "record 200001\nrecord 200002\n" >> "$T/big"'
        [ "$BG_STATUS" -eq 0 ]
        [ ! -s "$T/err" ]
        cmp "$T/out" <("$RIFFLE" --seed=1 $e "$T/big.orig")
        [ "$(wc -l < "$T/big")" -eq 200002 ]   # the append happened
        [ -z "$(ls -A "$T/tmp")" ]
    done
}

@test "a sole input truncated and rewritten longer while the output is written: the run fails" {
    for e in "" "--memory=64K -T $T/tmp"; do
        slow_sink "$e" '{ echo "record 0"; cat "$T/big.orig"; } > "$T/big"'
        [ "$BG_STATUS" -eq 1 ]
        # in memory, the run may also meet the cut under its mapping (SIGBUS)
        # before its last look at the file; the external engine has read it all
        [ "$(cat "$T/err")" = "riffle: $T/big: file changed as we read it" ] ||
            { [ -z "$e" ] &&
              [ "$(cat "$T/err")" = "riffle: bus error: an input file shrank while being read" ]; }
        [ -z "$(ls -A "$T/tmp")" ]
    done
}
