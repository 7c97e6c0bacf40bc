#!/usr/bin/env bats
# riffle scatter --by-reference / riffle gather FILE...: the file transport
# with packets that point into the inputs instead of holding the records.
# The gathers' outputs concatenated in task order must be `riffle --seed`'s
# bytes (P = 1 .. 5, -z, --header, several files with an unterminated last
# line and an empty one, a spilling gather, by-reference and byte packets
# mixed); inputs the gathers cannot read in place, a gather without the
# FILEs, with other FILEs or with a changed one are refused with a message,
# a non-zero exit and nothing written.

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
}

# The three steps one task after another: refs DIR P [option]... -- FILE...
# The options go to both scatter steps, the FILEs to every step.  Step 2 is
# by reference for the tasks in $BYREF ("all" by default), and the gathers
# get the FILEs and $GATHER_OPTS.  Output in DIR/out.
refs() {
    local dir=$1 p=$2; shift 2
    local opts=() files=() i
    while [ "$1" != -- ]; do opts+=("$1"); shift; done
    shift
    files=("$@")
    mkdir -p "$dir"
    for ((i = 0; i < p; i++)); do
        "$RIFFLE" scatter --count --task=$i --tasks="$p" --dir="$dir" "${opts[@]}" "${files[@]}"
    done
    for ((i = 0; i < p; i++)); do
        local by=()
        if [ "${BYREF:-all}" = all ] || [[ " $BYREF " == *" $i "* ]]; then by=(--by-reference); fi
        "$RIFFLE" scatter "${by[@]}" --task=$i --tasks="$p" --dir="$dir" --seed=3 "${opts[@]}" \
            "${files[@]}"
    done
    : > "$dir/out"
    for ((i = 0; i < p; i++)); do
        # shellcheck disable=SC2086
        "$RIFFLE" gather --task=$i --tasks="$p" --dir="$dir" --seed=3 ${GATHER_OPTS:-} \
            -o "$dir/part.$i" "${files[@]}"
        cat "$dir/part.$i" >> "$dir/out"
    done
}

# Lines of 60 bytes and more, so that a reference (about 3 bytes) is far
# smaller than its record.
long_lines() {
    awk -v n="$1" -v s="$2" 'BEGIN { for (i = 1; i <= n; i++)
        printf "%s-%06d-%s\n", s, i, "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz" }'
}

@test "P = 1 .. 5 by reference equal riffle --seed; the packets hold references, not records" {
    long_lines 30000 a > "$T/a"
    long_lines 7 b > "$T/b"
    printf 'last\nunterminated' > "$T/c"
    : > "$T/empty"
    "$RIFFLE" --seed=3 "$T/a" "$T/empty" "$T/b" "$T/c" > "$T/want"
    for p in 1 2 3 4 5; do
        refs "$T/d$p" "$p" -- "$T/a" "$T/empty" "$T/b" "$T/c"
        cmp "$T/want" "$T/d$p/out"
        # every packet file says it holds references, and together they are
        # a small fraction of the input (the records are ~65 bytes)
        local n
        n=$(ls "$T/d$p" | grep -c '\.to\.')
        [ "$n" -eq $((p * p)) ]
        for f in "$T/d$p"/*.to.*; do grep -qx references "$f"; done
        [ "$(cat "$T/d$p"/*.to.* | wc -c)" -lt $(($(wc -c < "$T/a") / 10)) ]
    done
}

@test "byte packets are unchanged: no references line, gathered without FILEs" {
    seq 1 500 > "$T/a"
    mkdir "$T/d"
    "$RIFFLE" scatter --count --task=0 --tasks=1 --dir="$T/d" "$T/a"
    "$RIFFLE" scatter --task=0 --tasks=1 --dir="$T/d" --seed=3 "$T/a"
    ! grep -qx references "$T/d/0.to.0"
    "$RIFFLE" gather --task=0 --tasks=1 --dir="$T/d" --seed=3 -o "$T/out"
    "$RIFFLE" --seed=3 "$T/a" | cmp - "$T/out"
}

@test "-z and --header by reference" {
    long_lines 800 z | tr '\n' '\0' > "$T/z"
    printf 'tail-without-nul' >> "$T/z"
    "$RIFFLE" --seed=3 -z "$T/z" > "$T/wantz"
    refs "$T/dz" 4 -z -- "$T/z"
    cmp "$T/wantz" "$T/dz/out"

    { printf 'h1\nh2\n'; long_lines 900 h; } > "$T/h"
    long_lines 50 i > "$T/i"
    "$RIFFLE" --seed=3 --header=2 "$T/h" "$T/i" > "$T/wanth"
    refs "$T/dh" 3 --header=2 -- "$T/h" "$T/i"
    cmp "$T/wanth" "$T/dh/out"
    [ "$(head -n 2 "$T/dh/out")" = "$(printf 'h1\nh2')" ]
    # a header longer than the first file
    printf 'one\ntwo\nthree\n' > "$T/three"
    "$RIFFLE" --seed=3 --header=5 "$T/three" "$T/h" > "$T/wanth5"
    refs "$T/dh5" 2 --header=5 -- "$T/three" "$T/h"
    cmp "$T/wanth5" "$T/dh5/out"
}

@test "a gather spilling under a small --memory into -T: same bytes, -T left empty" {
    long_lines 20000 s > "$T/s"
    mkdir "$T/tmp"
    "$RIFFLE" --seed=3 "$T/s" > "$T/want"
    GATHER_OPTS="--memory=64K -T $T/tmp" refs "$T/d" 3 -- "$T/s"
    cmp "$T/want" "$T/d/out"
    [ -z "$(ls -A "$T/tmp")" ]
}

@test "scatter tasks by reference and by bytes mixed: the gather needs the FILEs" {
    long_lines 2000 m > "$T/a"
    printf 'x\ny' > "$T/b"
    "$RIFFLE" --seed=3 "$T/a" "$T/b" > "$T/want"
    BYREF="0 2" refs "$T/d" 4 -- "$T/a" "$T/b"
    cmp "$T/want" "$T/d/out"
    grep -qx references "$T/d/2.to.3"
    ! grep -qx references "$T/d/1.to.3"
    ! grep -qx references "$T/d/3.to.3"
    # without the FILEs: the first part by reference is named
    run "$RIFFLE" gather --task=3 --tasks=4 --dir="$T/d" --seed=3 -o "$T/x"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/d/0.to.3: packets of task 0 are references into the inputs: give \`riffle gather\` the same FILEs as the scatters" ]
    [ ! -e "$T/x" ]
}

@test "standard input or a pipe by reference: refused, nothing written" {
    seq 1 100 > "$T/a"
    mkdir "$T/d"
    run "$RIFFLE" scatter --by-reference --task=0 --tasks=1 --dir="$T/d" --seed=3 < "$T/a"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: -: standard input: --by-reference needs regular files that every gather opens itself (scatter without it to send the records)" ]
    run "$RIFFLE" scatter --by-reference --task=0 --tasks=1 --dir="$T/d" --seed=3 "$T/a" - < "$T/a"
    [ "$status" -eq 1 ]
    [[ "$output" == "riffle: -: standard input: --by-reference needs"* ]]
    mkfifo "$T/fifo"
    run "$RIFFLE" scatter --by-reference --task=0 --tasks=1 --dir="$T/d" --seed=3 "$T/fifo"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/fifo: not a regular file: --by-reference needs regular files that every gather opens itself (scatter without it to send the records)" ]
    [ -z "$(ls -A "$T/d")" ]
    # refused before the counts are read: the directory need not exist
    run "$RIFFLE" scatter --by-reference --task=0 --tasks=1 --dir="$T/none" --seed=3 < "$T/a"
    [ "$status" -eq 1 ]
    [[ "$output" == *"standard input: --by-reference needs"* ]]
    [ ! -e "$T/none" ]
    run "$RIFFLE" scatter --by-reference --count --task=0 --tasks=1 --dir="$T/d" "$T/a"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: --by-reference is an option of step 2, not of --count" ]
    [ -z "$(ls -A "$T/d")" ]
}

@test "a gather of references without the FILEs: refused, no output" {
    long_lines 300 a > "$T/a"
    refs "$T/d" 2 -- "$T/a"
    rm "$T/d/part."*
    run "$RIFFLE" gather --task=1 --tasks=2 --dir="$T/d" --seed=3 -o "$T/x"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/d/0.to.1: packets of task 0 are references into the inputs: give \`riffle gather\` the same FILEs as the scatters" ]
    [ ! -e "$T/x" ]
    # to standard output: nothing written either
    run "$RIFFLE" gather --task=0 --tasks=2 --dir="$T/d" --seed=3
    [ "$status" -eq 1 ]
    [ "${#lines[@]}" -eq 1 ]
}

@test "a gather of references given other FILEs: refused, no output" {
    long_lines 300 a > "$T/a"
    printf 'b\n' > "$T/b"
    refs "$T/d" 2 -- "$T/a" "$T/b"
    # the same bytes in another file
    cp "$T/a" "$T/copy"
    run "$RIFFLE" gather --task=0 --tasks=2 --dir="$T/d" --seed=3 -o "$T/x" "$T/copy" "$T/b"
    [ "$status" -eq 1 ]
    [[ "$output" == "riffle: $T/d/count.0: counted with input 1 (inode "*"), but $T/copy has inode "*": the directory holds the run of other inputs, or an input changed since; rerun every step" ]]
    [ ! -e "$T/x" ]
    # one FILE fewer, or in another order
    run "$RIFFLE" gather --task=0 --tasks=2 --dir="$T/d" --seed=3 -o "$T/x" "$T/a"
    [ "$status" -eq 1 ]
    [[ "$output" == "riffle: $T/d/count.0: counted with 2 inputs, but this gather has 1: "* ]]
    run "$RIFFLE" gather --task=0 --tasks=2 --dir="$T/d" --seed=3 -o "$T/x" "$T/b" "$T/a"
    [ "$status" -eq 1 ]
    [[ "$output" == "riffle: $T/d/count.0: counted with input 1 (size "*"), but $T/b has size 2: "* ]]
    [ ! -e "$T/x" ]
}

@test "an input modified between scatter and gather (same size, new mtime): refused, no output" {
    long_lines 300 a > "$T/a"
    refs "$T/d" 3 -- "$T/a"
    rm "$T/d/part."*
    touch -d '2001-02-03 04:05:06' "$T/a"
    for j in 0 1 2; do
        run "$RIFFLE" gather --task=$j --tasks=3 --dir="$T/d" --seed=3 -o "$T/x" "$T/a"
        [ "$status" -eq 1 ]
        [[ "$output" == "riffle: $T/d/count.0: counted with input 1 (modified "*" UTC), but $T/a has modified 2001-02-03 04:05:06.000000000 UTC: the directory holds the run of other inputs, or an input changed since; rerun every step" ]]
        [ ! -e "$T/x" ]
    done
}

@test "packets of references that lost their references line are refused" {
    long_lines 300 a > "$T/a"
    refs "$T/d" 1 -- "$T/a"
    rm "$T/d/part."* "$T/d/out"
    # the line removed: the gather takes the frames for bytes, and the
    # library refuses frames of references without the inputs
    sed -i '/^references$/d' "$T/d/0.to.0"
    run "$RIFFLE" gather --task=0 --tasks=1 --dir="$T/d" --seed=3 -o "$T/x" "$T/a"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/d/0.to.0: not packets of task 0 for task 0 of 1" ]
    [ ! -e "$T/x" ]
}

@test "empty inputs, fewer records than tasks, a header only: by reference" {
    : > "$T/e"
    printf 'one\ntwo' > "$T/two"
    for files in "e" "e e" "two" "two e"; do
        # shellcheck disable=SC2086
        (cd "$T" && "$RIFFLE" --seed=3 $files > "$T/want")
        # shellcheck disable=SC2086
        (cd "$T" && refs "d-${files// /-}" 5 -- $files)
        cmp "$T/want" "$T/d-${files// /-}/out"
    done
    refs "$T/dh" 3 --header=2 -- "$T/two" "$T/e"
    "$RIFFLE" --seed=3 --header=2 "$T/two" "$T/e" | cmp - "$T/dh/out"
}

@test "an input rewritten between scatter and gather keeping size, inode and times: the references no longer fit" {
    seq 100000 199999 > "$T/a"
    refs "$T/d" 2 -- "$T/a"
    rm "$T/d/part."* "$T/d/out"
    # the same size, written in place (same inode), every line one byte
    # later, and the modification time put back: only the references' own
    # check, that each record lies between delimiters, can see it
    local m
    m=$(stat -c %y "$T/a")
    { printf 'X'; head -c $(($(stat -c %s "$T/a") - 1)) "$T/a"; } > "$T/new"
    dd if="$T/new" of="$T/a" conv=notrunc status=none
    touch -d "$m" "$T/a"
    [ "$(stat -c %y "$T/a")" = "$m" ]
    run "$RIFFLE" gather --task=1 --tasks=2 --dir="$T/d" --seed=3 -o "$T/x" "$T/a"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/d/0.to.1: references into the inputs as task 0 saw them, which these FILEs are not (a rewrite that kept their sizes and times?): rerun every step" ]
    [ ! -e "$T/x" ]
}
