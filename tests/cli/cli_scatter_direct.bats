#!/usr/bin/env bats
# riffle scatter --direct / riffle gather FILE: the file transport whose
# scatters write no records, each gather reading all of the one FILE itself
# and keeping its own.  The gathers' outputs concatenated in task order must
# be `riffle --seed`'s bytes (P = 1 .. 6, -z, --header, an unterminated last
# line, an empty file, fewer records than tasks); several FILEs, standard
# input, a gather without the FILE, with another or a changed one, another
# key, and direct and record packets mixed are refused with a message, a
# non-zero exit and nothing written.

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
}

# The three steps one task after another: direct DIR P [option]... -- FILE
# The options go to both scatter steps, the FILE to every step; the gathers
# get $GATHER_OPTS.  Output in DIR/out.
direct() {
    local dir=$1 p=$2; shift 2
    local opts=() i
    while [ "$1" != -- ]; do opts+=("$1"); shift; done
    shift
    mkdir -p "$dir"
    for ((i = 0; i < p; i++)); do
        "$RIFFLE" scatter --count --task=$i --tasks="$p" --dir="$dir" "${opts[@]}" "$@"
    done
    for ((i = 0; i < p; i++)); do
        "$RIFFLE" scatter --direct --task=$i --tasks="$p" --dir="$dir" --seed=3 "${opts[@]}" "$@"
    done
    : > "$dir/out"
    for ((i = 0; i < p; i++)); do
        # shellcheck disable=SC2086
        "$RIFFLE" gather --task=$i --tasks="$p" --dir="$dir" --seed=3 ${GATHER_OPTS:-} \
            -o "$dir/part.$i" "$@"
        cat "$dir/part.$i" >> "$dir/out"
    done
}

# Steps 1 and 2 for tasks 0 .. P-1 into DIR: steps DIR P FILE [SCATTER_OPTION]...
# (the options, --direct for instance, go to step 2).
steps() {
    local dir=$1 p=$2 file=$3 i
    shift 3
    mkdir -p "$dir"
    for ((i = 0; i < p; i++)); do
        "$RIFFLE" scatter --count --task=$i --tasks="$p" --dir="$dir" "$file"
    done
    for ((i = 0; i < p; i++)); do
        "$RIFFLE" scatter "$@" --task=$i --tasks="$p" --dir="$dir" --seed=3 "$file"
    done
}

# gather_refused TEXT ARG...: `riffle gather ARG... -o $T/out` fails with a
# message holding TEXT, and writes no output.
gather_refused() {
    local text=$1
    shift
    run "$RIFFLE" gather "$@" -o "$T/out"
    [ "$status" -ne 0 ]
    [[ "$output" == *"$text"* ]] || { echo "$output"; return 1; }
    [ ! -e "$T/out" ]
}

lines() {
    awk -v n="$1" -v s="$2" 'BEGIN { srand(s); for (i = 1; i <= n; i++) {
        k = int(rand() * 40); l = i ":"; for (j = 0; j < k; j++) l = l "x"; print l } }'
}

@test "P = 1 .. 6 direct equal riffle --seed; the packet files hold no records" {
    lines 20000 1 > "$T/a"
    printf 'unterminated' >> "$T/a"
    "$RIFFLE" --seed=3 "$T/a" > "$T/want"
    for p in 1 2 3 4 5 6; do
        direct "$T/d$p" "$p" -- "$T/a"
        cmp "$T/want" "$T/d$p/out"
        [ "$(ls "$T/d$p" | grep -c '\.to\.')" -eq $((p * p)) ]
        for f in "$T/d$p"/*.to.*; do
            grep -qx direct "$f"
            [ "$(tail -n 1 "$f")" = end ] # the run's identity, and nothing after it
        done
    done
}

@test "-z and --header direct" {
    lines 3000 2 | tr '\n' '\0' > "$T/z"
    "$RIFFLE" -z --seed=3 "$T/z" > "$T/want"
    direct "$T/d1" 3 -z -- "$T/z"
    cmp "$T/want" "$T/d1/out"
    lines 3000 3 > "$T/h"
    "$RIFFLE" --header=2 --seed=3 "$T/h" > "$T/want"
    direct "$T/d2" 4 --header=2 -- "$T/h"
    cmp "$T/want" "$T/d2/out"
    [ "$(head -n 2 "$T/d2/out")" = "$(head -n 2 "$T/h")" ]
}

@test "empty input, fewer records than tasks, a header only: direct" {
    : > "$T/empty"
    direct "$T/d1" 3 -- "$T/empty"
    [ ! -s "$T/d1/out" ]
    printf 'one\ntwo\n' > "$T/two"
    "$RIFFLE" --seed=3 "$T/two" > "$T/want"
    direct "$T/d2" 5 -- "$T/two"
    cmp "$T/want" "$T/d2/out"
    printf 'h1\nh2\n' > "$T/hdr"
    direct "$T/d3" 2 --header=5 -- "$T/hdr"
    cmp "$T/hdr" "$T/d3/out"
}

@test "several FILEs, standard input or a pipe with --direct: refused, nothing written" {
    seq 1 100 > "$T/a"
    seq 101 200 > "$T/b"
    mkdir "$T/d"
    "$RIFFLE" scatter --count --task=0 --tasks=1 --dir="$T/d" "$T/a" "$T/b"
    run "$RIFFLE" scatter --direct --task=0 --tasks=1 --dir="$T/d" --seed=3 "$T/a" "$T/b"
    [ "$status" -ne 0 ]
    [[ "$output" == *"--direct reads one FILE (each gather reads all of it), not 2"* ]]
    [ "$(ls "$T/d")" = count.0 ]
    run "$RIFFLE" scatter --direct --task=0 --tasks=1 --dir="$T/d" --seed=3 - < "$T/a"
    [ "$status" -ne 0 ]
    [[ "$output" == *"standard input: --direct needs regular files"* ]]
    run "$RIFFLE" scatter --direct --task=0 --tasks=1 --dir="$T/d" --seed=3 <(cat "$T/a")
    [ "$status" -ne 0 ]
    [[ "$output" == *"not a regular file: --direct needs regular files"* ]]
    [ "$(ls "$T/d")" = count.0 ]
    run "$RIFFLE" scatter --count --direct --task=0 --tasks=1 --dir="$T/d" "$T/a"
    [ "$status" -ne 0 ]
    [[ "$output" == *"--direct is an option of step 2, not of --count"* ]]
    run "$RIFFLE" scatter --direct --by-reference --task=0 --tasks=1 --dir="$T/d" --seed=3 "$T/a"
    [ "$status" -ne 0 ]
    [[ "$output" == *"--by-reference and --direct exclude each other"* ]]
}

@test "a direct gather without the FILE, with another, or with a changed one: refused, no output" {
    lines 500 4 > "$T/a"
    lines 500 5 > "$T/other"
    steps "$T/d" 2 "$T/a" --direct
    gather_refused "the scatters wrote no records (\`--direct\`): give \`riffle gather\` the FILE" --task=1 --tasks=2 --dir="$T/d" --seed=3
    gather_refused "rerun every step" --task=1 --tasks=2 --dir="$T/d" --seed=3 "$T/other"
    # another key than the scatters'
    gather_refused "key" --task=1 --tasks=2 --dir="$T/d" --seed=4 "$T/a"
    # the same size, a new modification time
    sed -i 's/^1:/9:/' "$T/a"
    gather_refused "rerun every step" --task=0 --tasks=2 --dir="$T/d" --seed=3 "$T/a"
}

@test "direct and record packets mixed between the scatter tasks: refused" {
    lines 500 6 > "$T/a"
    steps "$T/d" 2 "$T/a" --direct
    # task 1 scattered again with its records
    "$RIFFLE" scatter --task=1 --tasks=2 --dir="$T/d" --seed=3 "$T/a"
    gather_refused "1.to.0: packets of task 1 hold records, those of other tasks none" --task=0 --tasks=2 --dir="$T/d" --seed=3 "$T/a"
}

@test "a direct packet file that holds bytes after its identity is refused" {
    seq 1 50 > "$T/a"
    steps "$T/d" 1 "$T/a" --direct
    printf 'RFPK' >> "$T/d/0.to.0"
    gather_refused "packets of \`riffle scatter --direct\` hold no records" --task=0 --tasks=1 --dir="$T/d" --seed=3 "$T/a"
}
