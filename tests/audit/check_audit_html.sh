#!/bin/sh
# The HTML report of `riffle audit --report` renders in a real browser: headless
# Chromium takes a screenshot of a report with all three figures, and the
# picture must be a PNG with more than one colour's worth of content.  Skips
# (TAP plan "1..0 # skip") when Chromium is not installed (scripts/deps.sh
# installs it).  The flags keep the browser off the network (none here) and out
# of any profile but a fresh one of its own.
# Usage: check_audit_html.sh BUILD_DIR   (prints TAP)
build=${1:?build dir}
browser=""
for b in /usr/bin/chromium /usr/bin/chromium-browser /usr/bin/google-chrome; do
    [ -x "$b" ] && browser=$b && break
done
if [ -z "$browser" ]; then
    echo "1..0 # skip chromium is not installed"
    exit 0
fi
case $build in *asan*)
    echo "1..0 # skip the browser check runs once, with the plain build"
    exit 0 ;;
esac
echo "1..1"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/riffle-html.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
"$build/riffle" audit naive --n=6 --trials=20000 --seed=3 --report="$tmp/r.html" \
    > /dev/null 2>&1
[ -s "$tmp/r.html" ] || { echo "not ok 1 - no report written"; exit 0; }
timeout 120 "$browser" --headless --disable-gpu --no-sandbox --hide-scrollbars \
    --disable-quic --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$tmp/profile" \
    --window-size=1000,1600 --screenshot="$tmp/shot.png" "file://$tmp/r.html" \
    > "$tmp/log" 2>&1
# PNG signature, and a screenshot of figures compresses far worse than a blank
# page (a blank 1000x1600 PNG is a few kB).
if [ -s "$tmp/shot.png" ] &&
    [ "$(head -c 8 "$tmp/shot.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
    [ "$(wc -c < "$tmp/shot.png")" -gt 20000 ]; then
    echo "ok 1 - headless chromium renders the audit report ($(wc -c < "$tmp/shot.png") bytes)"
else
    echo "not ok 1 - headless chromium did not render the report"
    sed 's/^/# /' "$tmp/log" | tail -10
fi
