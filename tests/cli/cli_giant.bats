#!/usr/bin/env bats
# Records larger than the memory budget (riffle_engine.h, "Memory"): the
# external engine never holds one.  Its bytes go to a spill file among the
# temporary files and are copied to the output in pieces when its turn
# comes, so the peak memory stays within the budget plus the stated fixed
# overhead of 16 MiB, the output is the unconstrained run's, and an endless
# record ends as an out-of-space error of the temporary directory with
# nothing left in it.

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
    mkdir -p "$T/tmp"
}

teardown() {
    if [ -n "${MNT:-}" ]; then
        umount "$MNT" 2> /dev/null || true
    fi
    if [ -n "${CG:-}" ]; then
        # the cgroup empties once its last process is reaped: a bounded retry
        local i
        for i in $(seq 50); do
            rmdir "$CG" 2> /dev/null && break
            sleep 0.1
        done
    fi
}

sanitized() {
    grep -q __asan_init "$RIFFLE"
}

# peak_kib FILE: the peak resident size /usr/bin/time wrote to FILE.
peak_kib() {
    tail -n 1 "$1"
}

# The budget (64 MiB) plus the fixed overhead riffle_engine.h states (16 MiB).
BOUND_KIB=$(((64 + 16) * 1024))

# $T/giant: short lines around one line of 300 MB.
make_giant() {
    {
        seq 1 1000
        head -c 300000000 /dev/zero | tr '\0' 'g'
        echo
        seq 1001 2000
    } > "$T/giant"
}

# run_bounded WHAT RIFFLE-ARGS... [< INPUT]: riffle under /usr/bin/time with
# --memory=64M, its output's checksum in $T/sum (no 300 MB copy on disk)
# and its peak checked against the bound.
run_bounded() {
    local what=$1
    shift
    /usr/bin/time -f %M -o "$T/rss" "$RIFFLE" --seed=5 --memory=64M -T "$T/tmp" "$@" | md5sum > "$T/sum"
    echo "$what: peak $(peak_kib "$T/rss") KiB, bound $BOUND_KIB KiB"
    [ "$(peak_kib "$T/rss")" -le "$BOUND_KIB" ]
}

# The unconstrained output: its checksum, and in $T/k the count K that
# keeps the long line among the first K records (for -n K).
unconstrained() {
    "$RIFFLE" --seed=5 --memory=2G "$T/giant" > "$T/free"
    md5sum < "$T/free" > "$T/free.sum"
    echo $(($(grep -n -m 1 '^g' "$T/free" | cut -d: -f1) + 1)) > "$T/k"
    head -n "$(cat "$T/k")" "$T/free" | md5sum > "$T/head.sum"
    rm "$T/free"
}

@test "one 300 MB line from a file under --memory=64M: within the budget plus 16 MiB, the unconstrained output" {
    [ -x /usr/bin/time ] || skip "/usr/bin/time is not installed"
    sanitized && skip "sanitizer build: its overhead is not budgeted"
    make_giant
    unconstrained
    run_bounded "file" "$T/giant"
    cmp "$T/free.sum" "$T/sum"
    # -n K (the streamed head): the long line among the K kept
    run_bounded "file, -n K" -n "$(cat "$T/k")" "$T/giant"
    cmp "$T/head.sum" "$T/sum"
    [ -z "$(ls -A "$T/tmp")" ]
}

@test "one 300 MB line from a pipe under --memory=64M: within the budget plus 16 MiB, the unconstrained output" {
    [ -x /usr/bin/time ] || skip "/usr/bin/time is not installed"
    sanitized && skip "sanitizer build: its overhead is not budgeted"
    make_giant
    unconstrained
    run_bounded "pipe" < <(cat "$T/giant")
    cmp "$T/free.sum" "$T/sum"
    run_bounded "pipe, -n K" -n "$(cat "$T/k")" < <(cat "$T/giant")
    cmp "$T/head.sum" "$T/sum"
    [ -z "$(ls -A "$T/tmp")" ]
}

# Several records out of line among short ones, the last one without its
# delimiter; budgets small enough that buckets are scattered again (the
# proxies keep their places); a file and a pipe; lines and -z.
@test "records out of line among short ones: the in-memory output for every budget, file or pipe" {
    local i
    for i in 0 1 2 3 4; do
        seq -f "r$i-%g" 60000
        head -c $((700000 + i * 100000)) /dev/zero | tr '\0' 'G'
        echo
    done > "$T/mix"
    head -c 900000 /dev/zero | tr '\0' 'T' >> "$T/mix"
    "$RIFFLE" --seed=3 --memory=1G "$T/mix" > "$T/free"
    for m in 100K 1M 4M; do
        for t in 1 2; do
            "$RIFFLE" --seed=3 --memory=$m --threads=$t -T "$T/tmp" "$T/mix" > "$T/out"
            cmp "$T/free" "$T/out"
            cat "$T/mix" | "$RIFFLE" --seed=3 --memory=$m --threads=$t -T "$T/tmp" > "$T/out"
            cmp "$T/free" "$T/out"
        done
    done
    # -n K: the streamed head keeps some of them (1M: K up to 4096)
    for k in 1 2 5 400 4096; do
        head -n $k "$T/free" > "$T/want"
        "$RIFFLE" --seed=3 --memory=1M -n $k -T "$T/tmp" "$T/mix" > "$T/out"
        cmp "$T/want" "$T/out"
        cat "$T/mix" | "$RIFFLE" --seed=3 --memory=1M -n $k -T "$T/tmp" > "$T/out"
        cmp "$T/want" "$T/out"
    done
    # --split: an out-of-line record is one record of its part
    mkdir "$T/parts"
    "$RIFFLE" --seed=3 --memory=1G --split=7 --output-pattern="$T/parts/free%d" "$T/mix"
    "$RIFFLE" --seed=3 --memory=100K -T "$T/tmp" --split=7 --output-pattern="$T/parts/out%d" "$T/mix"
    for i in 0 1 2 3 4 5 6; do
        cmp "$T/parts/free$i" "$T/parts/out$i"
    done
    tr '\n' '\0' < "$T/mix" > "$T/mixz"
    "$RIFFLE" -z --seed=3 --memory=1G "$T/mixz" > "$T/free"
    "$RIFFLE" -z --seed=3 --memory=100K -T "$T/tmp" "$T/mixz" > "$T/out"
    cmp "$T/free" "$T/out"
    [ -z "$(ls -A "$T/tmp")" ]
}

# A small tmpfs as the temporary directory: root and a kernel that lets us
# mount one.
small_tmpfs() {
    [ "$(id -u)" = 0 ] || skip "mounting a tmpfs needs root"
    mkdir -p "$T/mnt"
    mount -t tmpfs -o size=16m tmpfs "$T/mnt" 2> /dev/null || skip "cannot mount a tmpfs here"
    MNT="$T/mnt"
}

# An endless record, held, would grow without end: under a 1 GiB address
# space limit it fails for memory instead, and the test fails.
@test "/dev/zero, one endless record: an out-of-space error of the temporary directory, nothing left" {
    sanitized && skip "sanitizer build: ulimit -v does not apply"
    small_tmpfs
    for args in "" "-n 1"; do   # the external engine, the streamed head
        run bash -c "ulimit -v 1048576; timeout 120 '$RIFFLE' --memory=8M $args -T '$MNT' /dev/zero > /dev/null"
        echo "$args: $output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"No space left on device"* ]]
        [ -z "$(ls -A "$MNT")" ]
    done
}

@test "a sparse 1 GB file of zero bytes: an out-of-space error of the temporary directory, nothing left" {
    sanitized && skip "sanitizer build: ulimit -v does not apply"
    small_tmpfs
    truncate -s 1G "$T/sparse"
    run bash -c "ulimit -v 1048576; timeout 120 '$RIFFLE' --memory=8M -T '$MNT' '$T/sparse' > /dev/null"
    echo "$output"
    [ "$status" -eq 1 ]
    [[ "$output" == *"No space left on device"* ]]
    [ -z "$(ls -A "$MNT")" ]
}

# The default budget under a limit the process is given: /dev/zero with and
# without -z (one endless record; endless empty records) ends as an
# out-of-space error of the small temporary directory -- status 1, not an
# OOM kill (137) -- with nothing left in it.
zero_under() { # LIMIT_COMMAND
    local z
    for z in "" -z; do
        run bash -c "$1; exec timeout 120 '$RIFFLE' $z -T '$MNT' /dev/zero > /dev/null"
        echo "${z:-lines}: status $status: $output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"No space left on device"* ]]
        [ -z "$(ls -A "$MNT")" ]
    done
}

@test "/dev/zero at the default budget under ulimit -d: an out-of-space error, nothing left" {
    sanitized && skip "sanitizer build: its shadow memory is not budgeted"
    small_tmpfs
    zero_under "ulimit -d 262144"
}

@test "/dev/zero at the default budget in a 256 MiB memory cgroup: an out-of-space error, not an OOM kill" {
    sanitized && skip "sanitizer build: its overhead is not budgeted"
    small_tmpfs
    # CG is removed by teardown, whatever the checks below say
    if [ -w /sys/fs/cgroup/memory ] && mkdir "/sys/fs/cgroup/memory/riffle-giant-$$" 2> /dev/null; then
        CG=/sys/fs/cgroup/memory/riffle-giant-$$
        echo $((256 << 20)) > "$CG/memory.limit_in_bytes"
    elif grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2> /dev/null &&
         mkdir "/sys/fs/cgroup/riffle-giant-$$" 2> /dev/null; then
        CG=/sys/fs/cgroup/riffle-giant-$$
        echo $((256 << 20)) > "$CG/memory.max"
    else
        skip "no memory cgroup can be made here"
    fi
    zero_under "echo \$\$ > '$CG/cgroup.procs'"
}
