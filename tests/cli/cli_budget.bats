#!/usr/bin/env bats
# The memory budget.  Any --memory works in bounded time: below the size at
# which splitting a bucket again pays (64 KiB), buckets are ordered in memory
# whatever the budget says, so a budget of a byte cannot make the external
# engine split buckets into files without end.  The output is the in-memory
# output.

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
    mkdir -p "$T/tmp"
    # ~1.4 MB: 40000 lines of varied length
    awk 'BEGIN { for (i = 1; i <= 40000; i++) {
        s = ""; for (j = 0; j < (i * 13) % 61; j++) s = s "y"
        print i " " s } }' > "$T/in"
}

@test "--memory of 1 and 2 bytes and 1K: the in-memory output, in bounded time, nothing left" {
    "$RIFFLE" --seed=9 "$T/in" > "$T/mem"
    for m in 1 2 1K; do
        # 60 s is a bound on a hang, not a speed target (a few seconds here)
        timeout 60 "$RIFFLE" --seed=9 --memory=$m -T "$T/tmp" "$T/in" > "$T/ext"
        cmp "$T/mem" "$T/ext"
    done
    [ -z "$(ls -A "$T/tmp")" ]
}

@test "10^6 empty lines under --memory=1K: every record, in bounded time" {
    head -c 1000000 /dev/zero | tr '\0' '\n' > "$T/empty"
    timeout 60 "$RIFFLE" --seed=1 --memory=1K -T "$T/tmp" "$T/empty" > "$T/out"
    [ "$(wc -l < "$T/out")" -eq 1000000 ]
    [ -z "$(tr -d '\n' < "$T/out")" ]
    [ -z "$(ls -A "$T/tmp")" ]
}

# The default budget is half of what the process may use, not of the
# machine: under a limit, an input above half of it goes to the external
# engine (its progress line shows "scatter"), with the unlimited output.
limited_run() { # LIMIT_COMMAND: run riffle on $T/big under it
    RIFFLE_PROGRESS_DELAY_MS=0 bash -c "$1; exec '$RIFFLE' --seed=1 --progress -T '$T/tmp' '$T/big'" \
        > "$T/limited" 2> "$T/err"
}

@test "the default budget follows RLIMIT_AS (ulimit -v)" {
    ! grep -q __asan_init "$RIFFLE" || skip "sanitizer build: ulimit -v does not apply"
    seq 12000000 > "$T/big"     # 97 MB
    "$RIFFLE" --seed=1 "$T/big" > "$T/free"
    limited_run "ulimit -v 262144"  # 256 MiB: a budget of 128 MiB
    grep -q scatter "$T/err"
    cmp "$T/free" "$T/limited"
    [ -z "$(ls -A "$T/tmp")" ]
}

@test "the default budget follows the memory cgroup's limit" {
    # a sanitizer build needs far more memory than its budget: no margin
    ! grep -q __asan_init "$RIFFLE" || skip "sanitizer build: its overhead is not budgeted"
    [ "$(id -u)" = 0 ] || skip "creating a cgroup needs root"
    local cg=""
    if [ -w /sys/fs/cgroup/memory ] && mkdir "/sys/fs/cgroup/memory/riffle-$$" 2> /dev/null; then
        cg=/sys/fs/cgroup/memory/riffle-$$
        echo $((256 << 20)) > "$cg/memory.limit_in_bytes"
    elif grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2> /dev/null &&
         mkdir "/sys/fs/cgroup/riffle-$$" 2> /dev/null; then
        cg=/sys/fs/cgroup/riffle-$$
        echo $((256 << 20)) > "$cg/memory.max"
    else
        skip "no memory cgroup can be made here"
    fi
    seq 12000000 > "$T/big"
    "$RIFFLE" --seed=1 "$T/big" > "$T/free"
    limited_run "echo \$\$ > '$cg/cgroup.procs'" || { rmdir "$cg"; false; }
    rmdir "$cg"
    grep -q scatter "$T/err"
    cmp "$T/free" "$T/limited"
    [ -z "$(ls -A "$T/tmp")" ]
}

# -r holds its input whole: within the budget, or a clear error naming it.
@test "-r: an input past --memory is refused naming the budget, -o untouched; one within it is drawn from" {
    echo original > "$T/out"
    for z in "" -z; do
        run timeout 60 "$RIFFLE" -r $z -n 1 --memory=1M -o "$T/out" /dev/zero
        [ "$status" -eq 1 ]
        [ "$output" = "riffle: /dev/zero: too large for --repeat within the memory budget of 1048576 bytes (see --memory)" ]
    done
    # one giant piped line
    run bash -c "head -c 3000000 /dev/zero | tr '\\0' x | timeout 60 '$RIFFLE' -r -n 1 --memory=1M -o '$T/out'"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: -: too large for --repeat within the memory budget of 1048576 bytes (see --memory)" ]
    [ "$(cat "$T/out")" = original ]
    [ -z "$(ls -A "$T" | grep '^\.riffle-' || true)" ]
    # within the budget: the draws as before
    seq 1000 | "$RIFFLE" -r -n 5 --seed=4 --memory=1M > "$T/got"
    [ "$(wc -l < "$T/got")" -eq 5 ]
    [ "$(sort -n "$T/got" | tail -n 1)" -le 1000 ]
}

# stdin redirected from a file that an earlier reader left past its first
# line is not mapped (mapping would show the bytes already read): it is read
# into memory, and so held within the budget like a pipe.
@test "-r: stdin from a file at a nonzero offset is held within --memory; within it, the draws of the same bytes" {
    for i in 1 2 3 4 5 6 7 8 9 10; do
        printf '%s' "$i"; head -c 100000 /dev/zero | tr '\0' x; echo
    done > "$T/long" # 1 MB in 10 records: the offsets alone fit in 200K
    tail -n +2 "$T/long" > "$T/rest"
    echo original > "$T/out"
    run bash -c "{ read -r _ && timeout 60 '$RIFFLE' -r -n 3 --seed=1 --memory=200K -o '$T/out' -; } < '$T/long'"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: -: too large for --repeat within the memory budget of 204800 bytes (see --memory)" ]
    [ "$(cat "$T/out")" = original ]
    run bash -c "{ read -r _ && timeout 60 '$RIFFLE' -r -n 3 --seed=1 --memory=200K -; } < '$T/long'"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: -: too large for --repeat within the memory budget of 204800 bytes (see --memory)" ]
    # the file itself at offset 0 is mapped: only its offsets are held
    "$RIFFLE" -r -n 3 --seed=1 --memory=200K "$T/long" > /dev/null
    # within a budget for the bytes, the draws are those of the same bytes
    # from a file or a pipe
    { read -r _ && "$RIFFLE" -r -n 50 --seed=1 --memory=2M -; } < "$T/long" > "$T/got"
    "$RIFFLE" -r -n 50 --seed=1 "$T/rest" > "$T/want"
    cmp "$T/want" "$T/got"
    "$RIFFLE" -r -n 50 --seed=1 < "$T/rest" > "$T/got"
    cmp "$T/want" "$T/got"
    cat "$T/rest" | "$RIFFLE" -r -n 50 --seed=1 > "$T/got"
    cmp "$T/want" "$T/got"
    [ "$(wc -l < "$T/got")" -eq 50 ]
    [ "$(cut -c 1-2 "$T/got" | grep -c '^1x')" -eq 0 ] # the first line was not drawn
}

@test "-r /dev/zero at the default budget under ulimit -v: refused, not grown until killed" {
    ! grep -q __asan_init "$RIFFLE" || skip "sanitizer build: ulimit -v does not apply"
    for z in "" -z; do
        run bash -c "ulimit -v 262144; timeout 60 '$RIFFLE' -r $z -n 1 /dev/zero > /dev/null"
        [ "$status" -eq 1 ]
        [[ "$output" == "riffle: /dev/zero: too large for --repeat within the memory budget of "*" bytes (see --memory)" ]]
    done
}
