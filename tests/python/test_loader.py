"""The ImportError for a shared library missing at import (the full
import, with the module's library renamed, is in check_python_install.sh)."""
from riffle._loader import missing_library_message


def test_missing_library_message():
    msg = missing_library_message
    m = msg("libsodium.so.23: cannot open shared object file: No such file or directory")
    assert "libsodium.so.23" in m and "apt install libsodium23" in m
    m = msg("libgmp.so.10: cannot open shared object file: No such file or directory")
    assert "libgmp.so.10" in m and "apt install libgmp10" in m
    assert msg("libfoo.so.1: cannot open shared object file: No such file") is None
    assert msg("undefined symbol: rf_x") is None
