#!/bin/sh
# The Python package's tests (tests/python/test_*.py, pytest) as TAP: one
# "ok" / "not ok" / "ok ... # skip reason" line per test, read from pytest's
# JUnit XML report.  Debian's /usr/bin/python3 runs them (the first python3
# on PATH may not see Debian's numpy, cffi and pytest).  The package is built
# from the plain build only (`make tests` runs `make python` when $PYTHON
# can import cffi), so for a sanitizer build, or without cffi, numpy or
# pytest, this prints the plan "1..0 # skip".
# Usage: check_python.sh BUILD_DIR
build=${1:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
PYTHON=${PYTHON:-/usr/bin/python3}
case $build in /*) ;; *) build=$top/$build ;; esac
if nm "$build/libriffle.a" 2>/dev/null | grep -q '__asan_'; then
    echo "1..0 # skip the Python package is built and tested with the plain build only"
    exit 0
fi
if ! "$PYTHON" -c 'import pytest, numpy, cffi' 2>/dev/null; then
    echo "1..0 # skip $PYTHON lacks pytest, numpy or cffi (sh scripts/deps.sh)"
    exit 0
fi
if ! ls "$top"/python/riffle/_riffle.*.so >/dev/null 2>&1; then
    echo "1..1"
    echo "not ok 1 - python/riffle/_riffle*.so is not built (make python)"
    exit 0
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$top" || exit 1
PYTHONPATH="$top/python:$top/tests/python" PYTHONDONTWRITEBYTECODE=1 \
RIFFLE="$build/riffle" BUILD="$build" \
    "$PYTHON" -m pytest -q -p no:cacheprovider --junitxml="$tmp/report.xml" tests/python \
    > "$tmp/log" 2>&1
status=$?
"$PYTHON" "$top/tests/checks/junit_tap.py" "$tmp/report.xml"
# pytest's own failure (a collection error, say) shows in its log.
if [ "$status" -ne 0 ] && [ "$status" -ne 1 ]; then
    sed 's/^/# /' "$tmp/log"
    exit "$status"
fi
exit 0
