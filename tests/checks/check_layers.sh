#!/bin/sh
# The layering of the tree (docs/ARCHITECTURE.md, "The folder rule"), read from every #include line
# of the C and C++ files that git knows (tracked or new, not ignored):
#   1. src/<layer>/ includes public headers ("riffle*.h"), headers of its own
#      folder (plain name) and headers of LOWER layers ("layer/name.h"), in the
#      order common < rng < uniform < permute < fair < keyed < perm < sample < rank <
#      records < engine < dist;
#   2. audit/ includes public headers and its own;
#   3. cli/ includes public headers, audit/ headers and its own;
#   4. tests/ includes public headers, src internals as "layer/name.h",
#      tests/lib headers and audit/ headers;
#   5. examples/ and fuzz/ include public headers only, but for the one
#      header the program exports to its command-line fuzzer, cli_options.h;
#   6. bench/ and mpi/ include public headers and their own; include/ only
#      public ones;
#   7. no file includes a .c file;
#   8. file names are unique across the tree (README.md, Makefile and the
#      like excepted).
# Needs no build (the argument, a build dir, is ignored).  Prints TAP, with
# the offending lines as diagnostics.  Usage: check_layers.sh [BUILD_DIR]
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/riffle-layers.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    git ls-files -co --exclude-standard > "$tmp/files"
else
    find . -type f ! -path './.git/*' ! -path './build*' | sed 's|^\./||' > "$tmp/files"
fi
# only files that exist (a deletion not yet committed is no longer there)
while IFS= read -r f; do
    [ -f "$f" ] && printf '%s\n' "$f"
done < "$tmp/files" > "$tmp/present"

grep -E '\.(c|h|cc|cpp|cxx|hh|hpp)$' "$tmp/present" > "$tmp/sources"
: > "$tmp/includes"
while IFS= read -r f; do
    grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]' "$f" |
        sed "s|^|$f:|" >> "$tmp/includes"
done < "$tmp/sources"

awk -v present="$tmp/present" '
BEGIN {
    nl = split("common rng uniform permute fair keyed perm sample rank records engine dist", L, " ")
    for (i = 1; i <= nl; i++) rank[L[i]] = i
    while ((getline f < present) > 0) exists[f] = 1
    close(present)
    ntests = 8
    desc[1] = "src/<layer>/ includes only public, own-folder and lower-layer headers (" \
              "common < rng < uniform < permute < fair < keyed < perm < sample < rank < records < engine < dist)"
    desc[2] = "audit/ includes only public headers and its own"
    desc[3] = "cli/ includes only public headers, audit/ headers and its own"
    desc[4] = "tests/ include only public headers, src internals as \"layer/name.h\", tests/lib and audit/ headers"
    desc[5] = "examples/ and fuzz/ include only public headers (fuzz/: and cli_options.h)"
    desc[6] = "bench/ and mpi/ include only public headers and their own; include/ only public headers"
    desc[7] = "no file includes a .c file"
    desc[8] = "file names are unique across the tree"
}
function bad(t, msg) { nbad[t]++; diag[t] = diag[t] "#   " msg "\n" }
function public(name) { return name ~ /^riffle[A-Za-z0-9_]*\.h$/ && exists["include/" name] }
function plain(name) { return name !~ /\// }
function dirof(f) { sub(/\/[^\/]*$/, "", f); return f }
{
    # file:line:text (file names hold no colon)
    file = $0; sub(/:.*/, "", file)
    rest = substr($0, length(file) + 2)
    line = rest; sub(/:.*/, "", line)
    text = substr(rest, length(line) + 2)
    where = file ":" line ": " text
    quoted = text ~ /include[ \t]*"/
    name = text
    if (quoted) { sub(/^[^"]*"/, "", name); sub(/".*$/, "", name) }
    else { sub(/^[^<]*</, "", name); sub(/>.*$/, "", name) }
    dir = dirof(file)

    if (name ~ /\.(c|cc|cpp|cxx)$/) bad(7, where)
    # Angle brackets name system headers; only a src/ internal is ours.
    if (!quoted) {
        if (name ~ /^[a-z]+\/[^\/]+\.h$/ && exists["src/" name]) {
            t = file ~ /^(examples|fuzz)\// ? 5 : file ~ /^src\// ? 1 : file ~ /^audit\// ? 2 : \
                file ~ /^cli\// ? 3 : file ~ /^bench\// || file ~ /^include\// ? 6 : 0
            if (t) bad(t, where " (a src/ internal)")
        }
        next
    }

    if (file ~ /^src\//) {
        layer = file; sub(/^src\//, "", layer); sub(/\/.*/, "", layer)
        if (!(layer in rank)) { bad(1, where " (src/" layer "/ is not a layer)"); next }
        if (public(name) || (plain(name) && exists[dir "/" name])) next
        if (name ~ /^[a-z]+\/[^\/]+$/) {
            other = name; sub(/\/.*/, "", other)
            if (!(other in rank)) bad(1, where " (" other " is not a layer)")
            else if (other == layer) bad(1, where " (its own folder: by plain name)")
            else if (rank[other] > rank[layer]) bad(1, where " (" other " is above " layer ")")
            else if (!exists["src/" name]) bad(1, where " (no src/" name ")")
            next
        }
        bad(1, where " (neither public, nor of src/" layer "/, nor \"layer/name.h\")")
    } else if (file ~ /^audit\//) {
        if (!(public(name) || (plain(name) && exists["audit/" name])))
            bad(2, where)
    } else if (file ~ /^cli\//) {
        if (!(public(name) || (plain(name) && (exists["cli/" name] || exists["audit/" name]))))
            bad(3, where)
    } else if (file ~ /^tests\//) {
        if (public(name)) next
        if (plain(name) && (exists["tests/lib/" name] || exists["audit/" name])) next
        if (name ~ /^[a-z]+\/[^\/]+\.h$/) {
            other = name; sub(/\/.*/, "", other)
            if ((other in rank) && exists["src/" name]) next
        }
        bad(4, where)
    } else if (file ~ /^(examples|fuzz)\//) {
        if (!public(name) && !(file ~ /^fuzz\// && name == "cli_options.h")) bad(5, where)
    } else if (file ~ /^bench\//) {
        if (!(public(name) || (plain(name) && exists["bench/" name]))) bad(6, where)
    } else if (file ~ /^mpi\//) {
        if (!(public(name) || (plain(name) && exists["mpi/" name]))) bad(6, where)
    } else if (file ~ /^include\//) {
        if (!public(name)) bad(6, where)
    }
}
END {
    # file names: every base name once, but for files every folder may have
    while ((getline f < present) > 0) {
        b = f; sub(/.*\//, "", b)
        if (b ~ /^(README(\.md)?|Makefile|GNUmakefile|\.gitignore|\.gitattributes|\.gitkeep|\.keep)$/)
            continue
        if (b in seen) {
            if (!(b in dup)) dup[b] = seen[b]
            dup[b] = dup[b] ", " f
        } else seen[b] = f
    }
    for (b in dup) bad(8, b ": " dup[b])
    print "1.." ntests
    for (t = 1; t <= ntests; t++) {
        if (nbad[t]) { printf "not ok %d - %s\n%s", t, desc[t], diag[t] }
        else printf "ok %d - %s\n", t, desc[t]
    }
}' "$tmp/includes"
