#!/bin/sh
# The Python package as a user installs it, with pip, offline (--no-index:
# nothing is fetched; --no-build-isolation: the build uses the packages
# already there), from a copy of the tree, as TAP:
#   - `pip wheel` of the tree makes a wheel whose module needs no
#     libriffle (readelf -d), links libsodium and GMP, and exports nothing
#     but its init function; `setup.py sdist` carries the C sources;
#   - the wheel installed into a venv of Debian's /usr/bin/python3
#     (--system-site-packages: Debian's numpy, cffi and pytest), and the
#     whole pytest suite run from / against that install, not the tree;
#   - with libsodium or GMP missing, importing riffle is an ImportError
#     that names the package to install (the installed module with its
#     library's name changed);
#   - the sdist installed into a venv of a CPython that is not Debian's (a
#     pyenv build of the same minor version, so that Debian's numpy, made
#     visible by a .pth file as a user's pip would have installed it, can
#     be loaded), then the core tests against it; skipped, by name, where
#     there is no such interpreter (PYENV_PYTHON names one).
# The plain build only (the argument, a build dir, says which; the package
# is compiled from the sources by setup.py, not taken from it).
# Usage: check_python_install.sh BUILD_DIR
build=${1:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
PYTHON=${PYTHON:-/usr/bin/python3}
case $build in /*) ;; *) build=$top/$build ;; esac
if nm "$build/libriffle.a" 2>/dev/null | grep -q '__asan_'; then
    echo "1..0 # skip the Python package is installed and tested with the plain build only"
    exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/riffle-pyinst.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# pip: no index, no cache, no user configuration, no version check
export PIP_NO_INDEX=1 PIP_NO_CACHE_DIR=1 PIP_CONFIG_FILE=/dev/null \
    PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONNOUSERSITE=1 PYTHONDONTWRITEBYTECODE=1
unset PYTHONPATH
version=$(sed -n 's/^#define RF_VERSION_STRING "\(.*\)"/\1/p' "$top/include/riffle.h")

: > "$tmp/tap"
ok() { echo "ok - $*" >> "$tmp/tap"; }
notok() { echo "not ok - $*" >> "$tmp/tap"; }
skip() { echo "ok - $1 # skip $2" >> "$tmp/tap"; }
diag() { sed 's/^/#   /' "$1" | tail -n 15 >> "$tmp/tap"; }
# check DESCRIPTION COMMAND...: one result, the command's output as
# diagnostics when it fails
check() {
    what=$1; shift
    if "$@" > "$tmp/out" 2>&1; then ok "$what"; else notok "$what"; diag "$tmp/out"; return 1; fi
}
finish() {
    awk '/^#/ { print; next } { n++; sub(/ - /, " " n " - "); print }
         END { print "1.." n }' "$tmp/tap"
    exit 0
}

# A copy of the tree without builds, so that nothing is written into it.
mkdir "$tmp/src"
(cd "$top" && tar --exclude='./build*' --exclude=./.git --exclude='*.so' \
    --exclude='*.egg-info' --exclude=__pycache__ -cf - .) | tar -C "$tmp/src" -xf - ||
    { notok "copy the tree"; finish; }

# ---- Debian's interpreter ----
check "a venv of $PYTHON (--system-site-packages)" \
    "$PYTHON" -m venv --system-site-packages "$tmp/venv" || finish
vpy=$tmp/venv/bin/python
check "pip wheel builds a wheel from the tree" \
    "$vpy" -m pip wheel -q --no-build-isolation --no-deps -w "$tmp/wheels" "$tmp/src" || finish
wheel=$(ls "$tmp"/wheels/riffle-"$version"-*.whl 2>/dev/null)
if [ -n "$wheel" ]; then ok "the wheel carries the library's version $version"
else notok "the wheel carries the library's version $version"; ls "$tmp/wheels" > "$tmp/out"; diag "$tmp/out"; finish; fi
mkdir "$tmp/unzip"
"$vpy" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
    "$wheel" "$tmp/unzip"
so=$(ls "$tmp"/unzip/riffle/_riffle*.so 2>/dev/null)
if [ -n "$so" ] && readelf -d "$so" > "$tmp/dyn" 2>&1; then
    if grep -q 'NEEDED.*libriffle' "$tmp/dyn"; then notok "the wheel's module needs no libriffle (readelf -d)"; diag "$tmp/dyn"
    else ok "the wheel's module needs no libriffle (readelf -d)"; fi
    if grep -q 'NEEDED.*\[libsodium\.so' "$tmp/dyn" && grep -q 'NEEDED.*\[libgmp\.so' "$tmp/dyn"; then
        ok "the wheel's module links libsodium and GMP as shared libraries"
    else notok "the wheel's module links libsodium and GMP as shared libraries"; diag "$tmp/dyn"; fi
    nm -D --defined-only "$so" | awk '{ print $NF }' > "$tmp/syms"
    if [ "$(cat "$tmp/syms")" = PyInit__riffle ]; then ok "the module exports PyInit__riffle only"
    else notok "the module exports PyInit__riffle only"; diag "$tmp/syms"; fi
else
    notok "the wheel holds riffle/_riffle*.so"; finish
fi

check "setup.py sdist" sh -c 'cd "$1/src" && "$2" setup.py -q sdist -d "$1/dist"' sh "$tmp" "$vpy"
sdist=$tmp/dist/riffle-$version.tar.gz
if tar -tzf "$sdist" > "$tmp/list" 2>&1 &&
    grep -q "^riffle-$version/src/perm/feistel\.c$" "$tmp/list" &&
    grep -q "^riffle-$version/include/riffle\.h$" "$tmp/list" &&
    grep -q "^riffle-$version/python/riffle/_glue\.c$" "$tmp/list" &&
    grep -q "^riffle-$version/python/build_ffi\.py$" "$tmp/list" &&
    [ "$(grep -c '^riffle-'"$version"'/src/.*\.c$' "$tmp/list")" -eq \
      "$(ls "$top"/src/*/*.c | wc -l)" ]; then
    ok "the sdist carries libriffle's C sources and headers and the glue"
else
    notok "the sdist carries libriffle's C sources and headers and the glue"; diag "$tmp/list"
fi

check "pip install of the wheel into the venv (dependencies already there)" \
    "$vpy" -m pip install -q --no-build-isolation "$wheel" || finish
where=$(cd / && "$vpy" -c 'import riffle; print(riffle.__file__, riffle.__version__)' 2>&1)
case $where in
"$tmp/venv/"*"/riffle/__init__.py $version") ok "riffle is imported from the venv, version $version" ;;
*) notok "riffle is imported from the venv, version $version"; echo "$where" > "$tmp/out"; diag "$tmp/out" ;;
esac

# The whole suite, from /, against the install: pytest puts tests/python
# (the tests' conftest) on sys.path, never python/ (the package's sources).
tests=$top/tests/python
(cd / && RIFFLE="$build/riffle" BUILD="$build" "$vpy" -m pytest -q -p no:cacheprovider \
    --rootdir="$tests" --junitxml="$tmp/report.xml" "$tests" > "$tmp/log" 2>&1)
status=$?
"$PYTHON" "$top/tests/checks/junit_tap.py" "$tmp/report.xml" "installed: " >> "$tmp/tap"
if [ "$status" -ne 0 ] && [ "$status" -ne 1 ]; then
    notok "pytest against the install ran (status $status)"; diag "$tmp/log"
fi

# A missing shared library: the installed package copied, its module's
# DT_NEEDED entry renamed to a library that does not exist.
for lib in libsodium libgmp; do
    what="without $lib, import riffle is an ImportError naming the package to install"
    rm -rf "$tmp/broken"; mkdir "$tmp/broken"
    cp -r "$(dirname "$(cd / && "$vpy" -c 'import riffle; print(riffle.__file__)')")" "$tmp/broken/"
    out=$(cd / && "$vpy" - "$tmp/broken" "$lib" <<'PY' 2>&1
import glob, re, sys
so = glob.glob(sys.argv[1] + "/riffle/_riffle*.so")[0]
data = open(so, "rb").read()
name = re.search(rb"\0(" + sys.argv[2].encode() + rb"\.so\.[0-9]+)\0", data).group(1)
gone = name[:-2] + b"99" if len(name) > 2 else name
open(so, "wb").write(data.replace(b"\0" + name + b"\0", b"\0" + gone + b"\0"))
sys.path.insert(0, sys.argv[1])
try:
    import riffle
    print("imported")
except ImportError as e:
    print("%s: %s" % (type(e).__name__, e))
PY
)
    case $lib:$out in
    libsodium:"ImportError: riffle needs the shared library libsodium.so."*"apt install libsodium23"*|\
    libgmp:"ImportError: riffle needs the shared library libgmp.so."*"apt install libgmp10"*)
        ok "$what" ;;
    *) notok "$what"; echo "$out" > "$tmp/out"; diag "$tmp/out" ;;
    esac
done

# ---- a CPython that is not Debian's ----
minor=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
other=${PYENV_PYTHON:-}
if [ -z "$other" ]; then
    for p in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$minor".*/bin/python3; do
        [ -x "$p" ] && other=$p
    done
fi
name="a venv of a CPython $minor that is not Debian's"
if [ -z "$other" ] || ! [ -x "$other" ]; then
    skip "$name: install from the sdist, import, core tests" \
        "no CPython $minor besides $PYTHON (a pyenv build under ~/.pyenv/versions/$minor.*, or PYENV_PYTHON)"
    finish
fi
check "$name ($other)" "$other" -m venv "$tmp/venv2" || finish
v2=$tmp/venv2/bin/python
site=$("$v2" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
# numpy, cffi, wheel and pytest as a user's pip would have put them there
echo /usr/lib/python3/dist-packages > "$site/debian-dist-packages.pth"
check "$name: pip install of the sdist" "$v2" -m pip install -q --no-build-isolation "$sdist" || finish
out=$(cd / && "$v2" -c 'import sys, riffle; print(sys.prefix != sys.base_prefix, riffle.__file__, riffle.__version__, sorted(riffle.Permutation(5, 1)[0:5].tolist()))' 2>&1)
case $out in
"True $tmp/venv2/"*"/riffle/__init__.py $version [0, 1, 2, 3, 4]") ok "$name: import riffle" ;;
*) notok "$name: import riffle"; echo "$out" > "$tmp/out"; diag "$tmp/out"; finish ;;
esac
(cd / && RIFFLE="$build/riffle" BUILD="$build" "$v2" -m pytest -q -p no:cacheprovider \
    --rootdir="$tests" --junitxml="$tmp/report2.xml" "$tests/test_permutation.py" \
    "$tests/test_generator.py" "$tests/test_recordfile.py" "$tests/test_gil.py" \
    > "$tmp/log2" 2>&1)
status=$?
"$PYTHON" "$top/tests/checks/junit_tap.py" "$tmp/report2.xml" "CPython $minor (not Debian's): " >> "$tmp/tap"
if [ "$status" -ne 0 ] && [ "$status" -ne 1 ]; then
    notok "$name: pytest ran (status $status)"; diag "$tmp/log2"
fi
finish
