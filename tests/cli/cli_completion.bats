#!/usr/bin/env bats
# Shell completions: the scripts the build writes from the commands' option
# tables (cli/completion/gen_completions.c).  bash is driven as readline
# would drive it (COMP_WORDS, COMP_CWORD) and the candidate sets compared
# exactly; every long option of every table must complete after its command;
# zsh and fish, when installed, get a syntax check and scripted completions.

setup() {
    : "${BUILD:=build}"
    GEN="$BUILD/gen_completions"
    BASH_SCRIPT="$BUILD/completions/riffle.bash"
    ZSH_SCRIPT="$BUILD/completions/_riffle"
    FISH_SCRIPT="$BUILD/completions/riffle.fish"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
    # Candidates include file names: each completion runs in a directory whose
    # contents the test chose.
    mkdir -p "$T/empty" "$T/files"
    : > "$T/files/data.txt"
    : > "$T/files/seeds.txt"
    : > "$T/files/--hello"
}

# The candidates bash offers for the words given (the last is the one being
# completed), sorted, one a line; run in directory $1.
bash_complete() { # dir word...
    local dir=$1 script
    shift
    script=$(cd "$(dirname "$BASH_SCRIPT")" && pwd)/$(basename "$BASH_SCRIPT")
    (cd "$dir" && bash --norc --noprofile -c '
        source "$1"; shift
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
        _riffle
        printf "%s\n" "${COMPREPLY[@]}"' _ "$script" "$@") | sort
}

lines() { printf '%s\n' "$@"; }

@test "the generated scripts are what the generator writes from the tables" {
    [ -x "$GEN" ]
    diff <("$GEN" bash) "$BASH_SCRIPT"
    diff <("$GEN" zsh) "$ZSH_SCRIPT"
    diff <("$GEN" fish) "$FISH_SCRIPT"
}

@test "the generator refuses an unknown shell" {
    run "$GEN" tcsh
    [ "$status" -eq 2 ]
    [ "$output" = "gen_completions: tcsh: unknown shell" ]
    run "$GEN"
    [ "$status" -eq 2 ]
}

@test "bash: sourcing the script registers the completion of riffle" {
    run bash --norc --noprofile -c 'source "$1" && complete -p riffle' _ "$BASH_SCRIPT"
    [ "$status" -eq 0 ]
    [ "$output" = "complete -o filenames -F _riffle riffle" ]
}

@test "bash: riffle sa completes to sample" {
    [ "$(bash_complete "$T/empty" riffle sa)" = "sample" ]
}

@test "bash: the first word is a command or a file" {
    [ "$(bash_complete "$T/files" riffle s)" = "$(lines sample scatter seeds.txt)" ]
    [ "$(bash_complete "$T/files" riffle d)" = "$(lines data.txt deal)" ]
    [ "$(bash_complete "$T/empty" riffle un)" = "unrank" ]
}

@test "bash: riffle sample --se completes to --seed" {
    [ "$(bash_complete "$T/empty" riffle sample --se)" = "--seed" ]
}

@test "bash: riffle --he offers the shuffle's --head-count, --header and --help" {
    [ "$(bash_complete "$T/empty" riffle --he)" = "$(lines --head-count --header --help)" ]
}

@test "bash: each command offers its own options, and only those" {
    [ "$(bash_complete "$T/empty" riffle deal --p)" = "$(lines --players --preset --production)" ]
    # perm has no --production; the shuffle's --progress is not perm's either
    [ "$(bash_complete "$T/empty" riffle perm --pr)" = "" ]
    [ "$(bash_complete "$T/empty" riffle perm --)" = "$(lines --help --inverse --mode --seed --size)" ]
    # after a file operand the shuffle's options still apply
    [ "$(bash_complete "$T/files" riffle data.txt --no)" = "--no-progress" ]
}

@test "bash: operands and option values complete file names, commands only first" {
    [ "$(bash_complete "$T/files" riffle sample d)" = "data.txt" ]
    [ "$(bash_complete "$T/files" riffle -o s)" = "seeds.txt" ]
    [ "$(bash_complete "$T/files" riffle --output=s)" = "--output=seeds.txt" ]
    # as readline splits it at '=' by default
    [ "$(bash_complete "$T/files" riffle --output = s)" = "seeds.txt" ]
    [ "$(bash_complete "$T/files" riffle deal --deck-file "")" = "$(lines --hello data.txt seeds.txt)" ]
    # after "--" a word starting with '-' is a file name
    [ "$(bash_complete "$T/files" riffle -- --h)" = "--hello" ]
}

@test "bash: every long option of every table completes after its command" {
    "$GEN" list > "$T/list"
    # the shuffle and all ten commands, dozens of options
    [ "$(cut -d' ' -f1 "$T/list" | sort -u | wc -l)" -eq 11 ]
    [ "$(wc -l < "$T/list")" -gt 80 ]
    missing=0
    while read -r cmd opt; do
        if [ "$cmd" = - ]; then
            got=$(bash_complete "$T/empty" riffle "$opt")
        else
            got=$(bash_complete "$T/empty" riffle "$cmd" "$opt")
        fi
        grep -qx -- "$opt" <<< "$got" || { echo "riffle $cmd $opt: not offered"; missing=1; }
    done < "$T/list"
    [ "$missing" -eq 0 ]
    # and every command at the first word
    for cmd in $(cut -d' ' -f1 "$T/list" | grep -vx -- - | sort -u); do
        grep -qx -- "$cmd" <<< "$(bash_complete "$T/empty" riffle "$cmd")" || {
            echo "command $cmd not offered"; return 1; }
    done
}

# zsh: the completion function's body run with the completion system's
# builtins replaced by stand-ins that print what would be offered (the real
# ones work only inside a completion widget): compadd prints its candidates
# that match PREFIX, _files prints "<files>".
zsh_complete() { # word...
    zsh -f -c '
        compadd() { while [[ $1 != -- ]]; do shift; done; shift
                    local a; for a; do [[ $a == ${PREFIX}* ]] && print -r -- $a; done }
        _files() { print -r -- "<files>" }
        compset() { [[ $1 == -P ]] && PREFIX=${PREFIX#*=} }
        script=$1; shift
        words=("$@"); CURRENT=$#; PREFIX=${words[CURRENT]}
        _riffle() { source $script }
        _riffle' _ "$ZSH_SCRIPT" "$@" | sort
}

@test "zsh: the script parses, and completes commands, options and files" {
    command -v zsh > /dev/null || skip "zsh not installed (sh scripts/deps.sh)"
    zsh -n "$ZSH_SCRIPT"
    [ "$(head -n 1 "$ZSH_SCRIPT")" = "#compdef riffle" ]
    [ "$(zsh_complete riffle sa)" = "$(lines '<files>' sample)" ]
    [ "$(zsh_complete riffle sample --se)" = "--seed" ]
    [ "$(zsh_complete riffle --he)" = "$(lines --head-count --header --help)" ]
    [ "$(zsh_complete riffle perm --pr)" = "" ]
    [ "$(zsh_complete riffle sample d)" = "<files>" ]
    [ "$(zsh_complete riffle --output=x)" = "<files>" ]
}

fish_complete() { # dir command-line
    (cd "$1" && fish --no-config -c 'source $argv[1]; complete -C $argv[2]' \
        "$(cd "$OLDPWD" && cd "$(dirname "$FISH_SCRIPT")" && pwd)/$(basename "$FISH_SCRIPT")" "$2") |
        cut -f1 | sort
}

@test "fish: the script parses, and completes commands, options and files" {
    command -v fish > /dev/null || skip "fish not installed (sh scripts/deps.sh)"
    fish --no-config -n "$FISH_SCRIPT"
    [ "$(fish_complete "$T/empty" 'riffle sa')" = "sample" ]
    [ "$(fish_complete "$T/empty" 'riffle sample --se')" = "--seed" ]
    [ "$(fish_complete "$T/empty" 'riffle --he')" = "$(lines --head-count --header --help)" ]
    [ "$(fish_complete "$T/empty" 'riffle perm --pr')" = "" ]
    [ "$(fish_complete "$T/files" 'riffle sample d')" = "data.txt" ]
}
