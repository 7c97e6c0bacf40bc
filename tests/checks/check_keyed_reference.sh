#!/bin/sh
# riffle's output for integer seeds equals an independent Python statement of
# the keyed order (tests/checks/keyed_reference.py), across a keyed-block
# boundary (2^16 items) and for -i as for lines.
# Usage: check_keyed_reference.sh BUILD_DIR
build=${1:?build dir}
here=$(dirname "$0")
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
echo "1..4"
i=0
for case in "42 20" "7 1000" "2026 70000"; do
    set -- $case
    i=$((i + 1))
    python3 "$here/keyed_reference.py" "$1" "$2" > "$tmp/want"
    seq "$2" | "$build/riffle" --seed="$1" > "$tmp/got"
    if cmp -s "$tmp/want" "$tmp/got"; then
        echo "ok $i - seq $2 | riffle --seed=$1 equals the reference"
    else
        echo "not ok $i - seq $2 | riffle --seed=$1 differs from the reference"
    fi
done
"$build/riffle" --seed=7 -i 1-1000 > "$tmp/got"
python3 "$here/keyed_reference.py" 7 1000 > "$tmp/want"
if cmp -s "$tmp/want" "$tmp/got"; then
    echo "ok 4 - riffle --seed=7 -i 1-1000 equals the reference"
else
    echo "not ok 4 - riffle --seed=7 -i 1-1000 differs from the reference"
fi
