#!/usr/bin/env bats
# -o and --split parts replace an existing file by a temporary file renamed
# over it.  A rename needs only the directory's write permission, so riffle
# itself refuses what writing to the file in place would refuse (GNU shuf's
# freopen): a file the caller may not write, and another user's file in a
# sticky directory.  What it may replace keeps its mode, and its group where
# the caller may set it.
#
# The cases need a file owned by someone other than the user who runs
# riffle: the tests run as root and run riffle as nobody (setpriv), from a
# directory of their own that nobody can reach; anywhere else they skip,
# saying why.

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    [ "$(id -u)" -eq 0 ] || skip "needs root, to own files that nobody then may not write"
    D=$(mktemp -d "${TMPDIR:-/tmp}/riffle-replace.XXXXXX")
    chmod 755 "$D"
    cp "$RIFFLE" "$D/riffle"
    mkdir "$D/w"
    chmod 777 "$D/w"
    printf 'one\ntwo\n' > "$D/w/two.txt"
    AS_NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    "${AS_NOBODY[@]}" test -x "$D/riffle" || skip "user nobody cannot run $D/riffle"
}

teardown() {
    [ -z "${D:-}" ] || rm -rf "$D"
}

# owner_mode FILE: "user:group mode", octal.
owner_mode() {
    stat -c '%U:%G %a' "$1"
}

# only_names DIR NAME...: DIR holds exactly the NAMEs (no temporary).
only_names() {
    local dir=$1
    shift
    [ "$(ls -A "$dir" | sort | tr '\n' ' ')" = "$(printf '%s\n' "$@" | sort | tr '\n' ' ')" ]
}

@test "-o a root-owned read-only file, as nobody in a world-writable directory: refused" {
    echo keep > "$D/w/ro"
    chmod 444 "$D/w/ro"
    run "${AS_NOBODY[@]}" "$D/riffle" -o "$D/w/ro" "$D/w/two.txt"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $D/w/ro: Permission denied" ]
    [ "$(cat "$D/w/ro")" = keep ]
    [ "$(owner_mode "$D/w/ro")" = "root:root 444" ]
    only_names "$D/w" ro two.txt
    # through the shuf name too, and with a seed (the keyed path)
    ln -s riffle "$D/shuf"
    run "${AS_NOBODY[@]}" "$D/shuf" --random-source=/dev/zero -o "$D/w/ro" "$D/w/two.txt"
    [ "$status" -eq 1 ]
    [ "$output" = "shuf: $D/w/ro: Permission denied" ]
    run "${AS_NOBODY[@]}" "$D/riffle" --seed=1 -o "$D/w/ro" "$D/w/two.txt"
    [ "$status" -eq 1 ]
    [ "$(cat "$D/w/ro")" = keep ]
    only_names "$D/w" ro two.txt
}

@test "--split with a root-owned read-only part: refused, no part written" {
    echo keep > "$D/w/ro"
    chmod 444 "$D/w/ro"
    run "${AS_NOBODY[@]}" "$D/riffle" --split=2 --output-pattern="$D/w/ok,$D/w/ro" "$D/w/two.txt"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $D/w/ro: Permission denied" ]
    [ "$(cat "$D/w/ro")" = keep ]
    [ "$(owner_mode "$D/w/ro")" = "root:root 444" ]
    only_names "$D/w" ro two.txt
}

@test "a read-only file reached through a symbolic link: refused, link and file kept" {
    echo keep > "$D/w/ro"
    chmod 444 "$D/w/ro"
    ln -s ro "$D/w/link"
    run "${AS_NOBODY[@]}" "$D/riffle" -o "$D/w/link" "$D/w/two.txt"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $D/w/link: Permission denied" ]
    [ "$(cat "$D/w/ro")" = keep ]
    [ -L "$D/w/link" ]
    only_names "$D/w" link ro two.txt
}

@test "a sticky directory: another user's writable file is refused, one's own replaced" {
    chmod 1777 "$D/w"
    echo keep > "$D/w/theirs"
    chmod 666 "$D/w/theirs"
    run "${AS_NOBODY[@]}" "$D/riffle" -o "$D/w/theirs" "$D/w/two.txt"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $D/w/theirs: Permission denied" ]
    [ "$(cat "$D/w/theirs")" = keep ]
    [ "$(owner_mode "$D/w/theirs")" = "root:root 666" ]
    run "${AS_NOBODY[@]}" "$D/riffle" --split=2 --output-pattern="$D/w/ok,$D/w/theirs" "$D/w/two.txt"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $D/w/theirs: Permission denied" ]
    only_names "$D/w" theirs two.txt
    # nobody's own file in the same directory: replaced, its mode kept
    "${AS_NOBODY[@]}" sh -c "echo old > '$D/w/mine' && chmod 640 '$D/w/mine'"
    run "${AS_NOBODY[@]}" "$D/riffle" -o "$D/w/mine" "$D/w/two.txt"
    [ "$status" -eq 0 ]
    [ "$(sort "$D/w/mine" | tr '\n' ' ')" = "one two " ]
    [ "$(owner_mode "$D/w/mine")" = "nobody:nogroup 640" ]
    only_names "$D/w" mine theirs two.txt
}

@test "a replaced file keeps its mode, and its group when the caller belongs to it" {
    # root's file, group users, writable by the group; nobody is a member
    echo old > "$D/w/shared"
    chown root:users "$D/w/shared"
    chmod 660 "$D/w/shared"
    run setpriv --reuid=65534 --regid=65534 --groups=100 "$D/riffle" -o "$D/w/shared" "$D/w/two.txt"
    [ "$status" -eq 0 ]
    [ "$(sort "$D/w/shared" | tr '\n' ' ')" = "one two " ]
    [ "$(owner_mode "$D/w/shared")" = "nobody:users 660" ]
    # the same for a --split part
    echo old > "$D/w/part"
    chown root:users "$D/w/part"
    chmod 640 "$D/w/part"
    chmod g+w "$D/w/part"
    run setpriv --reuid=65534 --regid=65534 --groups=100 "$D/riffle" --split=1,1 \
        --output-pattern="$D/w/part,$D/w/other" "$D/w/two.txt"
    [ "$status" -eq 0 ]
    [ "$(owner_mode "$D/w/part")" = "nobody:users 660" ]
    only_names "$D/w" other part shared two.txt
}

@test "root replaces a file it may not write by its mode, keeping owner, group and mode" {
    echo old > "$D/w/ro"
    chown nobody:users "$D/w/ro"
    chmod 440 "$D/w/ro"
    run "$D/riffle" -o "$D/w/ro" "$D/w/two.txt"
    [ "$status" -eq 0 ]
    [ "$(sort "$D/w/ro" | tr '\n' ' ')" = "one two " ]
    [ "$(owner_mode "$D/w/ro")" = "nobody:users 440" ]
}
