#!/bin/sh
# Install the Debian 12 packages riffle's build, tests and benchmarks need.
# Run as root on a bare machine; does nothing when everything is present.
set -eu
PACKAGES="make gcc g++ clang binutils pkg-config libsodium-dev libgmp-dev \
libcmocka-dev bats coreutils libclang-rt-14-dev python3 time strace util-linux procps iproute2 \
python3-dev python3-cffi python3-numpy python3-pytest python3-torch \
python3-venv python3-pip python3-setuptools python3-wheel \
openmpi-bin libopenmpi-dev mpich libmpich-dev chromium dieharder ent \
zsh fish cmake zlib1g-dev libzstd-dev zstd miller"
missing=""
for p in $PACKAGES; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -z "$missing" ]; then
    echo "deps: all packages present"
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "deps: missing packages:$missing (run this script as root)" >&2
    exit 1
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
