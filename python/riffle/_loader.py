"""Loading the compiled module, with an error that says what to install.

The module links libsodium and GMP as shared libraries.  When one is
missing, the dynamic loader's own message ("libsodium.so.23: cannot open
shared object file") names a file, not what provides it: the ImportError
raised here names the package to install instead."""
import re

# The shared libraries the module needs: the name in the loader's message
# and the package that provides it, per distribution.
_PROVIDERS = (
    ("libsodium", "libsodium (Debian/Ubuntu: apt install libsodium23; Fedora: dnf install "
                  "libsodium; conda: conda install -c conda-forge libsodium)"),
    ("libgmp", "GMP (Debian/Ubuntu: apt install libgmp10; Fedora: dnf install gmp; "
               "conda: conda install -c conda-forge gmp)"),
)


def missing_library_message(loader_message):
    """The message for a loader failure naming one of _PROVIDERS, else None."""
    m = re.search(r"(lib[A-Za-z0-9_+-]+\.so[.0-9]*): cannot open shared object file",
                  loader_message)
    if not m:
        return None
    for prefix, what in _PROVIDERS:
        if m.group(1).startswith(prefix + "."):
            return ("riffle needs the shared library %s, which is not installed: "
                    "install %s" % (m.group(1), what))
    return None


def load():
    """(ffi, lib) of riffle._riffle."""
    try:
        from ._riffle import ffi, lib
    except ImportError as e:
        msg = missing_library_message(str(e))
        if msg is None:
            raise
        raise ImportError(msg, name="riffle._riffle") from None
    return ffi, lib
