"""The compiled part of the Python package riffle, for setuptools.

pyproject.toml holds the metadata; this adds what it cannot say: the
version, read from include/riffle.h (one number for the C library and the
package), and the module riffle._riffle, which cffi builds from libriffle's
sources (python/build_ffi.py).  setuptools' build directory is put under
build/ as build/setuptools, beside the Makefile's objects, not over them.
"""
import os
import re

from setuptools import setup

TOP = os.path.dirname(os.path.abspath(__file__))


def version():
    """RF_VERSION_STRING of include/riffle.h."""
    with open(os.path.join(TOP, "include", "riffle.h")) as f:
        m = re.search(r'^#define RF_VERSION_STRING "([^"]+)"', f.read(), re.M)
    if not m:
        raise RuntimeError("include/riffle.h defines no RF_VERSION_STRING")
    return m.group(1)


setup(
    version=version(),
    cffi_modules=["python/build_ffi.py:make_ffi"],
    options={"build": {"build_base": os.path.join("build", "setuptools")}},
)
