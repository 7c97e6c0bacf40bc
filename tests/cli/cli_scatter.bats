#!/usr/bin/env bats
# riffle scatter / riffle gather: the file transport of a distributed run.
# The gathers' outputs concatenated in task order must be `riffle --seed`'s
# bytes, for P = 1, 2, 3, 5 tasks run one after another and at the same time,
# with -z, --header, several files and empty input; a task run twice writes
# the same bytes; errors are clear, exit non-zero and leave nothing behind.

load ../lib/bg_jobs

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
}

teardown() {
    exec 8<&- 2> /dev/null || true
    bg_cleanup
}

# The three steps one task after another: dist DIR P [options] -- FILE...
# (options go to every step; --seed=3 unless given).  Output in DIR/out.
dist() {
    local dir=$1 p=$2; shift 2
    local opts=() files=()
    while [ "$1" != -- ]; do opts+=("$1"); shift; done
    shift
    files=("$@")
    mkdir -p "$dir"
    local i
    for ((i = 0; i < p; i++)); do
        "$RIFFLE" scatter --count --task=$i --tasks="$p" --dir="$dir" "${opts[@]}" "${files[@]}"
    done
    for ((i = 0; i < p; i++)); do
        "$RIFFLE" scatter --task=$i --tasks="$p" --dir="$dir" --seed=3 "${opts[@]}" "${files[@]}"
    done
    : > "$dir/out"
    for ((i = 0; i < p; i++)); do
        "$RIFFLE" gather --task=$i --tasks="$p" --dir="$dir" --seed=3 --memory=64K \
            -o "$dir/part.$i"
        cat "$dir/part.$i" >> "$dir/out"
    done
}

# The same with every task of a step started at once (background jobs,
# waited for; a step starts when the previous one has ended).
dist_parallel() {
    local dir=$1 p=$2; shift 2
    local files=("$@") pids=() i
    mkdir -p "$dir"
    for ((i = 0; i < p; i++)); do
        "$RIFFLE" scatter --count --task=$i --tasks="$p" --dir="$dir" "${files[@]}" & pids+=($!)
    done
    for i in "${pids[@]}"; do wait "$i"; done
    pids=()
    for ((i = 0; i < p; i++)); do
        "$RIFFLE" scatter --task=$i --tasks="$p" --dir="$dir" --seed=3 "${files[@]}" & pids+=($!)
    done
    for i in "${pids[@]}"; do wait "$i"; done
    pids=()
    for ((i = 0; i < p; i++)); do
        "$RIFFLE" gather --task=$i --tasks="$p" --dir="$dir" --seed=3 -o "$dir/part.$i" &
        pids+=($!)
    done
    for i in "${pids[@]}"; do wait "$i"; done
    : > "$dir/out"
    for ((i = 0; i < p; i++)); do cat "$dir/part.$i" >> "$dir/out"; done
}

# Only the files the transport names are in DIR (no temporary left).
only_transport_files() {
    local dir=$1
    ! ls -A "$dir" | grep -Ev '^(count\.[0-9]+|[0-9]+\.to\.[0-9]+|header|out|part\.[0-9]+)$'
}

@test "--help of both commands" {
    run "$RIFFLE" scatter --help
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "Usage: riffle scatter --count"* ]]
    run "$RIFFLE" gather --help
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "Usage: riffle gather --task=J"* ]]
    run "$RIFFLE" --help
    [[ "$output" == *scatter* && "$output" == *gather* ]]
}

@test "P = 1, 2, 3, 5 one after another equal riffle --seed" {
    seq 1 5000 > "$T/a"
    "$RIFFLE" --seed=3 "$T/a" > "$T/want"
    for p in 1 2 3 5; do
        dist "$T/d$p" $p -- "$T/a"
        cmp "$T/d$p/out" "$T/want"
        only_transport_files "$T/d$p"
    done
}

@test "P = 1, 2, 3, 5 in parallel equal riffle --seed" {
    seq 1 20000 | sed 's/$/ some text/' > "$T/a"
    "$RIFFLE" --seed=3 "$T/a" > "$T/want"
    for p in 1 2 3 5; do
        dist_parallel "$T/d$p" $p "$T/a"
        cmp "$T/d$p/out" "$T/want"
        only_transport_files "$T/d$p"
    done
}

@test "several files, one unterminated, --header and -z" {
    seq 1 300 > "$T/a"
    printf 'x\ny\nno end' > "$T/b"
    : > "$T/empty"
    seq 1000 1100 > "$T/c"
    "$RIFFLE" --seed=3 --header=2 "$T/a" "$T/b" "$T/empty" "$T/c" > "$T/want"
    dist "$T/d" 3 --header=2 -- "$T/a" "$T/b" "$T/empty" "$T/c"
    cmp "$T/d/out" "$T/want"
    seq 1 700 | tr '\n' '\0' > "$T/z"
    "$RIFFLE" --seed=3 -z --header=1 "$T/z" > "$T/wantz"
    dist "$T/dz" 5 -z --header=1 -- "$T/z"
    cmp "$T/dz/out" "$T/wantz"
}

@test "empty input and fewer records than tasks" {
    : > "$T/empty"
    dist "$T/d" 3 -- "$T/empty"
    [ ! -s "$T/d/out" ]
    printf 'one\ntwo\n' > "$T/two"
    "$RIFFLE" --seed=3 "$T/two" > "$T/want"
    dist "$T/d2" 5 -- "$T/two"
    cmp "$T/d2/out" "$T/want"
}

@test "other generators and --random-source" {
    seq 1 999 > "$T/a"
    head -c 32 /dev/zero | tr '\0' 'k' > "$T/key"
    "$RIFFLE" --random-source="$T/key" --rng=pcg64 "$T/a" > "$T/want"
    mkdir "$T/d"
    for i in 0 1; do "$RIFFLE" scatter --count --task=$i --tasks=2 --dir="$T/d" "$T/a"; done
    for i in 0 1; do
        "$RIFFLE" scatter --task=$i --tasks=2 --dir="$T/d" --random-source="$T/key" \
            --rng=pcg64 "$T/a"
    done
    for i in 0 1; do
        "$RIFFLE" gather --task=$i --tasks=2 --dir="$T/d" --random-source="$T/key" --rng=pcg64
    done > "$T/out"
    cmp "$T/out" "$T/want"
}

@test "a task run twice writes the same bytes" {
    seq 1 3000 > "$T/a"
    dist "$T/d" 3 -- "$T/a"
    cp "$T/d/1.to.0" "$T/d/1.to.2" "$T/d/count.1" "$T/d/part.1" "$T"/
    "$RIFFLE" scatter --count --task=1 --tasks=3 --dir="$T/d" "$T/a"
    "$RIFFLE" scatter --task=1 --tasks=3 --dir="$T/d" --seed=3 "$T/a"
    "$RIFFLE" gather --task=1 --tasks=3 --dir="$T/d" --seed=3 -o "$T/d/part.1"
    cmp "$T/d/1.to.0" "$T/1.to.0"
    cmp "$T/d/1.to.2" "$T/1.to.2"
    cmp "$T/d/count.1" "$T/count.1"
    cmp "$T/d/part.1" "$T/part.1"
    only_transport_files "$T/d"
}

@test "gather spills under a small --memory into -T, and cleans up" {
    seq 1 50000 > "$T/a"
    "$RIFFLE" --seed=3 "$T/a" > "$T/want"
    mkdir "$T/d" "$T/tmp"
    for i in 0 1; do "$RIFFLE" scatter --count --task=$i --tasks=2 --dir="$T/d" "$T/a"; done
    for i in 0 1; do "$RIFFLE" scatter --task=$i --tasks=2 --dir="$T/d" --seed=3 "$T/a"; done
    for i in 0 1; do
        "$RIFFLE" gather --task=$i --tasks=2 --dir="$T/d" --seed=3 --memory=16K -T "$T/tmp"
    done > "$T/out"
    cmp "$T/out" "$T/want"
    [ -z "$(ls -A "$T/tmp")" ]
}

@test "a compressed input is refused by both steps, named with its format; nothing written" {
    seq 1 100 > "$T/a"
    seq 1 50 | gzip > "$T/b.gz"
    seq 1 50 | zstd -q > "$T/c"
    mkdir "$T/d"
    local f step
    for f in "$T/b.gz" "$T/c"; do
        for step in --count --seed=3; do
            run "$RIFFLE" scatter "$step" --task=0 --tasks=2 --dir="$T/d" "$T/a" "$f"
            [ "$status" -eq 1 ]
            [[ "$output" == "riffle: $f: "*"-compressed input is not read by 'riffle scatter'"* ]]
            [ -z "$(ls -A "$T/d")" ]
        done
    done
    [[ "$output" == *"zstd-compressed"* ]]
}

@test "a missing count file: named, non-zero exit, nothing written" {
    seq 1 100 > "$T/a"
    mkdir "$T/d"
    "$RIFFLE" scatter --count --task=0 --tasks=3 --dir="$T/d" "$T/a"
    run "$RIFFLE" scatter --task=2 --tasks=3 --dir="$T/d" --seed=3 "$T/a"
    [ "$status" -eq 1 ]
    [[ "$output" == *"$T/d/count.1: No such file or directory"* ]]
    [[ "$output" == *"--count --task=1"* ]]
    [ "$(ls -A "$T/d")" = count.0 ]
}

@test "a missing packet file or header: named, non-zero exit, no output" {
    seq 1 100 > "$T/a"
    dist "$T/d" 2 -- "$T/a"
    rm "$T/d/1.to.0"
    run "$RIFFLE" gather --task=0 --tasks=2 --dir="$T/d" --seed=3 -o "$T/o"
    [ "$status" -eq 1 ]
    [[ "$output" == *"$T/d/1.to.0: No such file or directory"* ]]
    [ ! -e "$T/o" ]
    dist "$T/e" 2 -- "$T/a"
    rm "$T/e/header"
    run "$RIFFLE" gather --task=0 --tasks=2 --dir="$T/e" --seed=3 -o "$T/o"
    [ "$status" -eq 1 ]
    [[ "$output" == *"$T/e/header"* ]]
    [ ! -e "$T/o" ]
    only_transport_files "$T/d"
    only_transport_files "$T/e"
}

@test "packets of another run are refused" {
    seq 1 100 > "$T/a"
    dist "$T/d" 2 -- "$T/a"
    cp "$T/d/0.to.1" "$T/d/0.to.0"
    run "$RIFFLE" gather --task=0 --tasks=2 --dir="$T/d" --seed=3
    [ "$status" -eq 1 ]
    [[ "$output" == *"0.to.0: not packets of task 0 for task 0 of 2"* ]]
}

@test "an input changed since counting is found" {
    seq 1 100 > "$T/a"
    mkdir "$T/d"
    "$RIFFLE" scatter --count --task=0 --tasks=2 --dir="$T/d" "$T/a"
    "$RIFFLE" scatter --count --task=1 --tasks=2 --dir="$T/d" "$T/a"
    seq 1 90 > "$T/a"
    run "$RIFFLE" scatter --task=1 --tasks=2 --dir="$T/d" --seed=3 "$T/a"
    [ "$status" -eq 1 ]
    [[ "$output" == *"the input changed since it was counted"* ]]
    [ "$(ls -A "$T/d" | tr '\n' ' ')" = "count.0 count.1 " ]
}

# counts DIR P FILE... [options]: step 1 of every task; scatters DIR P
# SEED FILE...: step 2 of every task with --seed=SEED.
counts() {
    local dir=$1 p=$2 i; shift 2
    for ((i = 0; i < p; i++)); do
        "$RIFFLE" scatter --count --task=$i --tasks="$p" --dir="$dir" "$@"
    done
}
scatters() {
    local dir=$1 p=$2 seed=$3 i; shift 3
    for ((i = 0; i < p; i++)); do
        "$RIFFLE" scatter --task=$i --tasks="$p" --dir="$dir" --seed="$seed" "$@"
    done
}

# gather_refused DIR P J PATTERN [ARGS...]: task J's gather (--seed=3, -o)
# fails with a message matching PATTERN and writes no output.
gather_refused() {
    local dir=$1 p=$2 j=$3 pattern=$4; shift 4
    run "$RIFFLE" gather --task="$j" --tasks="$p" --dir="$dir" --seed=3 -o "$T/o" "$@"
    echo "gather $j: $output" >&2
    [ "$status" -eq 1 ]
    [[ "$output" == riffle:\ $pattern ]]
    [ ! -e "$T/o" ]
    [ -z "$(ls -A "$T" | grep '^\.riffle-' || true)" ]
    only_transport_files "$dir"
}

@test "packets of an earlier run in the same --dir: every gather refuses them" {
    seq 1 3000 > "$T/a"
    seq 1 9000 | sed 's/^/b/' > "$T/b"
    mkdir "$T/d"
    counts "$T/d" 2 "$T/a"
    scatters "$T/d" 2 3 "$T/a"
    # a new run starts in D: its counts, and part of its scatters
    counts "$T/d" 2 "$T/b"
    "$RIFFLE" scatter --task=1 --tasks=2 --dir="$T/d" --seed=3 "$T/b"
    for j in 0 1; do
        gather_refused "$T/d" 2 $j "$T/d/0.to.$j: scattered with input 1 (size 13893), but $T/d/count.0 has size 52893: the counts were made again since; rerun \`riffle scatter --task=0\`"
    done
    # its scatter of task 0 completes the new run
    "$RIFFLE" scatter --task=0 --tasks=2 --dir="$T/d" --seed=3 "$T/b"
    "$RIFFLE" --seed=3 "$T/b" > "$T/want"
    for j in 0 1; do "$RIFFLE" gather --task=$j --tasks=2 --dir="$T/d" --seed=3; done > "$T/out"
    cmp "$T/out" "$T/want"
}

@test "counts of two runs: the scatter and the gather refuse them" {
    seq 1 3000 > "$T/a"
    seq 1 9000 | sed 's/^/b/' > "$T/b"
    mkdir "$T/d"
    counts "$T/d" 2 "$T/a"
    scatters "$T/d" 2 3 "$T/a"
    "$RIFFLE" scatter --count --task=0 --tasks=2 --dir="$T/d" "$T/b"
    gather_refused "$T/d" 2 1 "$T/d/count.1: counted with input 1 (size 13893), but $T/d/count.0 has size 52893: the counts are of two runs; rerun \`riffle scatter --count\`, then \`riffle scatter\`, on every task"
    cp "$T/d/1.to.0" "$T/keep"
    run "$RIFFLE" scatter --task=1 --tasks=2 --dir="$T/d" --seed=3 "$T/b"
    [ "$status" -eq 1 ]
    [[ "$output" == "riffle: $T/d/count.1: counted with input 1 (size 13893), but $T/b has size 52893: the count is of other inputs, or the input changed since it was counted; rerun \`riffle scatter --count\` on every task" ]]
    cmp "$T/d/1.to.0" "$T/keep"
}

@test "a later run completed in the same --dir: refused for another key, or given the FILEs" {
    seq 1 3000 > "$T/a"
    seq 1 9000 | sed 's/^/b/' > "$T/b"
    mkdir "$T/d"
    counts "$T/d" 2 "$T/a"
    scatters "$T/d" 2 3 "$T/a"
    counts "$T/d" 2 "$T/b"
    scatters "$T/d" 2 5 "$T/b"
    # the first run's gathers (--seed=3) find the second run's packets
    for j in 0 1; do
        gather_refused "$T/d" 2 $j "$T/d/0.to.$j: scattered with another --seed or --random-source than this gather's: give every scatter and gather the same key (rerun \`riffle scatter --task=0\` with this gather's, or give the gather the scatter's)"
    done
    # with the same key, the gather given its FILEs tells the runs apart
    scatters "$T/d" 2 3 "$T/b"
    gather_refused "$T/d" 2 0 "$T/d/count.0: counted with input 1 (size 52893), but $T/a has size 13893: the directory holds the run of other inputs, or an input changed since; rerun every step" "$T/a"
    gather_refused "$T/d" 2 1 "$T/d/count.0: counted with 1 input, but this gather has 2: the directory holds the run of other inputs, or an input changed since; rerun every step" "$T/b" "$T/b"
    "$RIFFLE" --seed=3 "$T/b" > "$T/want"
    for j in 0 1; do
        "$RIFFLE" gather --task=$j --tasks=2 --dir="$T/d" --seed=3 "$T/b"
    done > "$T/out"
    cmp "$T/out" "$T/want"
}

@test "scatter tasks given different seeds: the gathers refuse the odd ones" {
    seq 1 5000 > "$T/a"
    mkdir "$T/d"
    counts "$T/d" 3 "$T/a"
    for i in 0 1 2; do
        "$RIFFLE" scatter --task=$i --tasks=3 --dir="$T/d" --seed=$((42 + i)) "$T/a"
    done
    for j in 0 1 2; do
        run "$RIFFLE" gather --task=$j --tasks=3 --dir="$T/d" --seed=42 -o "$T/o"
        [ "$status" -eq 1 ]
        [[ "$output" == "riffle: $T/d/1.to.$j: scattered with another --seed or --random-source than this gather's: "*"rerun \`riffle scatter --task=1\`"* ]]
        [ ! -e "$T/o" ]
    done
    # the generator too
    "$RIFFLE" scatter --task=1 --tasks=3 --dir="$T/d" --seed=42 "$T/a"
    "$RIFFLE" scatter --task=2 --tasks=3 --dir="$T/d" --seed=42 --rng=pcg64 "$T/a"
    run "$RIFFLE" gather --task=0 --tasks=3 --dir="$T/d" --seed=42
    [ "$status" -eq 1 ]
    [[ "$output" == "riffle: $T/d/2.to.0: scattered with --rng=pcg64, but this gather has --rng=chacha20: give every scatter and gather the same --rng"* ]]
    [ -z "$(ls -A "$T" | grep '^\.riffle-' || true)" ]
    only_transport_files "$T/d"
}

# edit_in_place FILE: one byte rewritten in place (line 3's '3' of a seq):
# the same size and records, a new modification time (the tests set an old
# one first, so that the new one differs whatever the clock's tick).
edit_in_place() {
    printf 'X' | dd of="$1" bs=1 seek=4 conv=notrunc 2> /dev/null
}

@test "an input edited in place at the same size between two scatter tasks is refused" {
    seq 1 4000 > "$T/a"
    touch -d @1600000000 "$T/a"
    mkdir "$T/d"
    counts "$T/d" 2 "$T/a"
    "$RIFFLE" scatter --task=0 --tasks=2 --dir="$T/d" --seed=3 "$T/a"
    edit_in_place "$T/a"
    run "$RIFFLE" scatter --task=1 --tasks=2 --dir="$T/d" --seed=3 "$T/a"
    [ "$status" -eq 1 ]
    [[ "$output" == "riffle: $T/d/count.0: counted with input 1 (modified 2020-09-13 12:26:40.000000000 UTC), but $T/a has modified "*" UTC: the count is of other inputs, or the input changed since it was counted; rerun \`riffle scatter --count\` on every task" ]]
    [ -z "$(ls -A "$T/d" | grep '^1\.to\.' || true)" ]
    only_transport_files "$T/d"
}

@test "a stream where a file was counted: both kinds named" {
    seq 1 4000 > "$T/a"
    mkdir "$T/d"
    counts "$T/d" 1 "$T/a"
    run sh -c "cat '$T/a' | '$RIFFLE' scatter --task=0 --tasks=1 --dir='$T/d' --seed=3 -"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/d/count.0: counted with input 1 (type regular file), but - has type stream (a pipe or device): the count is of other inputs, or the input changed since it was counted; rerun \`riffle scatter --count\` on every task" ]
    only_transport_files "$T/d"
}

@test "an input edited in place at the same size between count and scatter is refused" {
    seq 1 4000 > "$T/a"
    touch -d @1600000000 "$T/a"
    mkdir "$T/d"
    counts "$T/d" 2 "$T/a"
    edit_in_place "$T/a"
    for i in 0 1; do
        run "$RIFFLE" scatter --task=$i --tasks=2 --dir="$T/d" --seed=3 "$T/a"
        [ "$status" -eq 1 ]
        [[ "$output" == *"the input changed since it was counted; rerun \`riffle scatter --count\` on every task" ]]
    done
    [ "$(ls -A "$T/d" | tr '\n' ' ')" = "count.0 count.1 " ]
    # counted again, the run goes through
    counts "$T/d" 2 "$T/a"
    scatters "$T/d" 2 3 "$T/a"
    "$RIFFLE" --seed=3 "$T/a" > "$T/want"
    for j in 0 1; do "$RIFFLE" gather --task=$j --tasks=2 --dir="$T/d" --seed=3; done > "$T/out"
    cmp "$T/out" "$T/want"
}

@test "--tasks, --header or -z unlike the counts: the option and both values named" {
    seq 1 2000 > "$T/a"
    mkdir "$T/d"
    counts "$T/d" 2 "$T/a" --header=1
    run "$RIFFLE" scatter --task=1 --tasks=3 --dir="$T/d" --seed=3 --header=1 "$T/a"
    [ "$status" -eq 1 ]
    [[ "$output" == "riffle: $T/d/count.0: counted with --tasks=2, but this scatter has --tasks=3: give every step the same options, or rerun \`riffle scatter --count\` with these on every task" ]]
    run "$RIFFLE" scatter --task=1 --tasks=2 --dir="$T/d" --seed=3 "$T/a"
    [ "$status" -eq 1 ]
    [[ "$output" == "riffle: $T/d/count.0: counted with --header=1, but this scatter has --header=0: "* ]]
    run "$RIFFLE" scatter --task=0 --tasks=2 --dir="$T/d" --seed=3 --header=1 -z "$T/a"
    [ "$status" -eq 1 ]
    [[ "$output" == "riffle: $T/d/count.0: counted with no -z, but this scatter has -z: "* ]]
    [ "$(ls -A "$T/d" | tr '\n' ' ')" = "count.0 count.1 " ]
    scatters "$T/d" 2 3 "$T/a" --header=1
    run "$RIFFLE" gather --task=0 --tasks=3 --dir="$T/d" --seed=3 -o "$T/o"
    [ "$status" -eq 1 ]
    [[ "$output" == "riffle: $T/d/count.0: counted with --tasks=2, but this gather has --tasks=3: give every step the same --tasks" ]]
    [ ! -e "$T/o" ]
    only_transport_files "$T/d"
}

@test "the files of a run record its identity and a hash of the key, never the key" {
    seq 1 3000 > "$T/a"
    head -c 32 /dev/urandom > "$T/key"
    mkdir "$T/d"
    counts "$T/d" 2 "$T/a"
    for i in 0 1; do
        "$RIFFLE" scatter --task=$i --tasks=2 --dir="$T/d" --random-source="$T/key" "$T/a"
    done
    ino=$(stat -c %i "$T/a")
    [ "$(head -n 6 "$T/d/1.to.0")" = "riffle run 1
step packets
tasks 2
header 0
delimiter newline
inputs 1" ]
    [[ "$(sed -n 7p "$T/d/1.to.0")" == "input file 13893 "*.?????????" $ino" ]]
    # neither the key's bytes nor its hex digits are in any file
    /usr/bin/python3 -c 'import sys
k = open(sys.argv[1], "rb").read()
sys.exit(any(x in open(f, "rb").read() for f in sys.argv[2:] for x in (k, k.hex().encode())))' \
        "$T/key" "$T"/d/*
    grep -q '^key [0-9a-f]\{32\}$' "$T/d/0.to.1"
}

@test "a count file of another version or task is refused" {
    seq 1 100 > "$T/a"
    mkdir "$T/d"
    printf '40\n' > "$T/d/count.0"
    run "$RIFFLE" scatter --task=1 --tasks=2 --dir="$T/d" --seed=3 "$T/a"
    [ "$status" -eq 1 ]
    [[ "$output" == "riffle: $T/d/count.0: not the count of task 0 of this version of riffle: run \`riffle scatter --count --task=0\` first" ]]
    "$RIFFLE" scatter --count --task=1 --tasks=2 --dir="$T/d" "$T/a"
    cp "$T/d/count.1" "$T/d/count.0"
    run "$RIFFLE" scatter --task=1 --tasks=2 --dir="$T/d" --seed=3 "$T/a"
    [ "$status" -eq 1 ]
    [[ "$output" == *"count.0: not the count of task 0"* ]]
    [ "$(ls -A "$T/d" | tr '\n' ' ')" = "count.0 count.1 " ]
}

@test "a count, packet or header file cut short anywhere in its identity is refused" {
    seq 1 200 > "$T/a"
    dist "$T/d" 2 -- "$T/a"
    local f n k
    for f in count.1 1.to.0 header; do
        cp "$T/d/$f" "$T/keep"
        n=$(grep -b -m1 '^end$' "$T/keep" | cut -d: -f1)
        for ((k = 0; k <= n + 3; k++)); do
            head -c "$k" "$T/keep" > "$T/d/$f"
            run "$RIFFLE" gather --task=0 --tasks=2 --dir="$T/d" --seed=3 -o "$T/o"
            [ "$status" -eq 1 ] || { echo "$f cut at $k: status $status" >&2; false; }
            [[ "$output" == "riffle: $T/d/$f: not "* ]] || { echo "$f at $k: $output" >&2; false; }
            [ ! -e "$T/o" ]
        done
        cp "$T/keep" "$T/d/$f"
    done
    "$RIFFLE" gather --task=0 --tasks=2 --dir="$T/d" --seed=3 -o "$T/o"
    only_transport_files "$T/d"
}

@test "bad --task, --tasks, missing options, missing --seed: usage errors" {
    seq 1 10 > "$T/a"
    mkdir "$T/d"
    run "$RIFFLE" scatter --count --task=3 --tasks=3 --dir="$T/d" "$T/a"
    [ "$status" -eq 1 ]
    [[ "$output" == *"invalid task number 3: tasks are numbered 0 to 2"* ]]
    run "$RIFFLE" scatter --count --task=x --tasks=3 --dir="$T/d" "$T/a"
    [ "$status" -eq 1 ]
    [[ "$output" == *"invalid task number 'x'"* ]]
    run "$RIFFLE" gather --task=0 --tasks=0 --dir="$T/d" --seed=1
    [ "$status" -eq 1 ]
    [[ "$output" == *"invalid task count 0"* ]]
    run "$RIFFLE" scatter --count --tasks=3 --dir="$T/d" "$T/a"
    [ "$status" -eq 1 ]
    [[ "$output" == *"--task, --tasks and --dir are required"* ]]
    run "$RIFFLE" scatter --task=0 --tasks=1 --dir="$T/d" "$T/a"
    [ "$status" -eq 1 ]
    [[ "$output" == *"--seed or --random-source is required"* ]]
    run "$RIFFLE" gather --task=0 --tasks=1 --dir="$T/d"
    [ "$status" -eq 1 ]
    [[ "$output" == *"--seed or --random-source is required"* ]]
    run "$RIFFLE" gather --task=0 --tasks=1 --dir="$T/d" --seed=1 -T "$T/nope"
    [ "$status" -eq 1 ]
    [[ "$output" == *"cannot use temporary directory"* ]]
    run "$RIFFLE" gather --task=0 --tasks=1 --dir="$T/d" --seed=1 --memory=lots
    [ "$status" -eq 1 ]
    [[ "$output" == *"invalid memory size 'lots'"* ]]
    run "$RIFFLE" gather --task=0 --tasks=1 --dir="$T/d" --seed=1 --threads=-1
    [ "$status" -eq 1 ]
    [[ "$output" == *"invalid thread count '-1'"* ]]
    [ -z "$(ls -A "$T/d")" ]
}

@test "a missing input: named, non-zero exit, nothing written" {
    mkdir "$T/d"
    run "$RIFFLE" scatter --count --task=0 --tasks=2 --dir="$T/d" "$T/nope"
    [ "$status" -eq 1 ]
    [[ "$output" == *"$T/nope: No such file or directory"* ]]
    printf '0\n' > "$T/d/count.0"
    run "$RIFFLE" scatter --task=1 --tasks=2 --dir="$T/d" --seed=1 "$T/nope"
    [ "$status" -eq 1 ]
    [[ "$output" == *"$T/nope: No such file or directory"* ]]
    [ "$(ls -A "$T/d")" = count.0 ]
}

@test "a directory that does not exist: no file anywhere" {
    seq 1 10 > "$T/a"
    run "$RIFFLE" scatter --count --task=0 --tasks=1 --dir="$T/nodir" "$T/a"
    [ "$status" -eq 1 ]
    [[ "$output" == *"$T/nodir/count.0: No such file or directory"* ]]
    [ ! -e "$T/nodir" ]
}

# The file system of $T gives unnamed files (O_TMPFILE).
unnamed_here() {
    /usr/bin/python3 -c 'import os, sys
os.close(os.open(sys.argv[1], os.O_TMPFILE | os.O_WRONLY, 0o600))' "$T" 2> /dev/null
}

# open_in PID DIR: how many of PID's descriptors are open on files in DIR.
open_in() {
    local fd n=0
    for fd in /proc/"$1"/fd/*; do
        case "$(readlink "$fd" 2> /dev/null)" in "$2"/*) n=$((n + 1)) ;; esac
    done
    echo "$n"
}

# gather_killed_spilled: one task's gather of 2.7 MB under --memory=16K
# writes to a FIFO; once its first byte is read the gather has spilled
# everything and is writing, its bucket files open, and it blocks on the
# FIFO (nothing more is read).  Then SIGKILL.  Sets OPEN to the number of
# its descriptors on files in $T/tmp at that moment, NAMES to what $T/tmp
# held then.
gather_killed_spilled() {
    local pid first
    seq 1 400000 > "$T/a"
    mkdir -p "$T/d" "$T/tmp"
    "$RIFFLE" scatter --count --task=0 --tasks=1 --dir="$T/d" "$T/a"
    "$RIFFLE" scatter --task=0 --tasks=1 --dir="$T/d" --seed=3 "$T/a"
    mkfifo "$T/fifo"
    default_signals "$RIFFLE" gather --task=0 --tasks=1 --dir="$T/d" --seed=3 --memory=16K \
        -T "$T/tmp" > "$T/fifo" 3>&- &
    pid=$!
    bg_track "$pid"
    exec 8< "$T/fifo"
    read -r -N 1 -u 8 first
    OPEN=$(open_in "$pid" "$T/tmp")
    NAMES=$(ls -A "$T/tmp")
    kill -KILL "$pid"
    bg_reap "$pid"
    exec 8<&-
    [ "$BG_STATUS" -eq 137 ]
}

@test "gather killed with SIGKILL while spilled leaves nothing in -T (O_TMPFILE)" {
    unnamed_here || skip "the file system of $T has no O_TMPFILE"
    gather_killed_spilled
    [ -z "$NAMES" ]    # no name in -T while spilled ...
    [ "$OPEN" -ge 2 ]  # ... though its bucket files were open there
    [ -z "$(ls -A "$T/tmp")" ]
}

@test "gather with named temporaries (RIFFLE_NAMED_TEMPS): same bytes, cleaned up; SIGKILL leaves the directory" {
    seq 1 50000 > "$T/a"
    "$RIFFLE" --seed=3 "$T/a" > "$T/want"
    mkdir "$T/d" "$T/tmp"
    "$RIFFLE" scatter --count --task=0 --tasks=1 --dir="$T/d" "$T/a"
    "$RIFFLE" scatter --task=0 --tasks=1 --dir="$T/d" --seed=3 "$T/a"
    RIFFLE_NAMED_TEMPS=1 "$RIFFLE" gather --task=0 --tasks=1 --dir="$T/d" --seed=3 \
        --memory=16K -T "$T/tmp" > "$T/out"
    cmp "$T/out" "$T/want"
    [ -z "$(ls -A "$T/tmp")" ]
    rm -r "$T/d"
    export RIFFLE_NAMED_TEMPS=1
    gather_killed_spilled
    [[ "$NAMES" == riffle-?????? ]]
    [ -n "$(ls -A "$T/tmp/$NAMES")" ]  # the fallback's leftovers, as riffle(1) FILES says
    [ "$(ls -A "$T/tmp")" = "$NAMES" ]
}
