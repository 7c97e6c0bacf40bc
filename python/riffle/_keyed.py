"""riffle.keyed_order: the order the riffle program gives records."""
import operator

import numpy as np

from ._core import check, make_key, rng_kind
from ._riffle import ffi, lib


def keyed_order(n, seed=None, rng="chacha20", threads=0):
    """The keyed order of n items (riffle.h, "Keyed order") as an int64
    array: out[j] is the item that goes to place j.

    This is the order in which `riffle --seed=S FILE` writes the lines of a
    file of n lines (after any --header lines), whatever its size, memory
    budget or thread count: data[keyed_order(len(data), S)] puts an array in
    the order the program puts the corresponding lines of a file -- labels
    kept beside a shuffled text file, say.  For n <= 2**20 it is also the
    order of `riffle --seed=S -i 0-(n-1)`.  Every one of the n! orders is
    equally likely.  8 bytes per item; threads: 0 for one per CPU (the
    result does not depend on it).
    """
    n = operator.index(n)
    if n < 0:
        raise ValueError("n must be >= 0")
    threads = operator.index(threads)
    if threads < 0:
        raise ValueError("threads must be >= 0")
    kind = rng_kind(rng)
    key = make_key(seed)
    out = np.empty(n, dtype=np.uint64)
    try:
        check(lib.py_keyed_index(key, kind, n, threads,
                                 ffi.from_buffer("uint64_t[]", out)), "keyed order")
    finally:
        ffi.memmove(key, b"\0" * 32, 32)
    return out.view(np.int64)
