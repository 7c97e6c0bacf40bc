"""riffle.Permutation: a keyed bijection on range(n), n up to 2**64."""
import operator
import sys

import numpy as np

from ._core import check, cpu_count, make_key
from ._riffle import ffi, lib

_U64 = 1 << 64
_I64_MAX = (1 << 63) - 1
# Indices evaluated per library call when iterating.
_BLOCK = 1 << 12


class Permutation:
    """A random permutation p of range(n) that is never held in memory.

    Permutation(n, seed=None, mode="auto", threads=0)

    n: 1 <= n <= 2**64.  seed: as riffle.Generator's (the program's --seed
    rule; None keys it from the operating system).  mode: "auto" (an exact
    Fisher-Yates table for n <= 2**20, 8 bytes per element; beyond, a Feistel
    cipher with SipHash-1-3 rounds and cycle walking in O(1) memory),
    "table", "siphash" or "multiply" -- riffle_perm.h describes each and what
    it promises.  threads: how many threads compute a long slice p[a:b]
    (0: one per CPU; at least 2**16 indices per thread); the values never
    depend on it.

    p[i] (negative i counts from the end, as for range), p.inverse(j),
    p[index_array] and p[a:b:c] as numpy arrays (consecutive indices use the
    library's vector kernel, rf_perm_at_range), iter(p), len(p) (which
    raises OverflowError beyond sys.maxsize, as range does: p.n always
    works).  Values are Python ints, or int64 arrays (uint64 when n > 2**63).

    The same p as the riffle program: p[i] is `riffle perm --size n --seed S
    i`, and for n > 2**20, p[0:k] is `riffle --seed=S -i 0-(n-1) -n k`.
    Read-only after construction: threads may share it.
    """

    def __init__(self, n, seed=None, mode="auto", threads=0):
        n = operator.index(n)
        if n < 1 or n > _U64:
            raise ValueError("n must be between 1 and 2**64")
        threads = operator.index(threads)
        if threads < 0:
            raise ValueError("threads must be >= 0")
        m = ffi.new("rf_perm_mode *")
        if not isinstance(mode, str) or lib.rf_perm_mode_parse(mode.encode(), m) != lib.RF_OK:
            raise ValueError("unknown mode %r (auto, table, siphash, multiply)" % (mode,))
        key = make_key(seed)
        status = ffi.new("rf_status *")
        p = lib.rf_perm_new(key, n - 1, m[0], status)
        ffi.memmove(key, b"\0" * 32, 32)
        if p == ffi.NULL:
            check(status[0], "cannot make the permutation")
        self._p = ffi.gc(p, lib.rf_perm_free)
        self._args = (n, seed, mode, threads)
        self._threads = threads or cpu_count()
        self._n = n
        self._dtype = np.int64 if n - 1 <= _I64_MAX else np.uint64

    def __reduce__(self):
        """Picklable when seeded (made again from n, seed and mode); an
        OS-keyed permutation cannot be rebuilt elsewhere."""
        if self._args[1] is None:
            raise TypeError("cannot pickle a Permutation keyed by the operating system")
        return (Permutation, self._args)

    @property
    def n(self):
        """The size of the domain (an int, up to 2**64)."""
        return self._n

    @property
    def mode(self):
        """The resolved mode: "table", "siphash" or "multiply"."""
        return ffi.string(lib.rf_perm_mode_name(lib.rf_perm_get_mode(self._p))).decode()

    def __len__(self):
        if self._n > sys.maxsize:
            raise OverflowError("Permutation of %d elements has more than sys.maxsize; "
                                "use .n" % self._n)
        return self._n

    def __repr__(self):
        return "riffle.Permutation(n=%d, mode=%r)" % (self._n, self.mode)

    def _scalar(self, i, fn):
        i = operator.index(i)
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError("index out of range")
        return fn(self._p, i)

    def _array(self, idx, gather):
        a = np.asarray(idx)
        if a.dtype == bool:
            raise IndexError("boolean masks are not indices of a permutation")
        if a.dtype.kind not in "iu":
            if a.size == 0:
                a = a.astype(np.int64)
            else:
                raise IndexError("indices must be integers")
        shape = a.shape
        flat = np.ascontiguousarray(a.reshape(-1))
        if flat.size and flat.dtype.kind == "i" and int(flat.min()) < 0:
            wide = flat.astype(object)
            wide[wide < 0] += self._n
            if (wide < 0).any():
                raise IndexError("index out of range")
            flat = np.array(wide, dtype=np.uint64)
        # non-negative int64 is read as uint64 in place: no copy
        u = flat.view(np.uint64) if flat.dtype.itemsize == 8 else flat.astype(np.uint64)
        if u.size and int(u.max()) >= self._n:
            raise IndexError("index out of range")
        out = np.empty(u.size, dtype=np.uint64)
        gather(self._p, ffi.from_buffer("uint64_t[]", u), u.size,
               ffi.from_buffer("uint64_t[]", out))
        return out.view(self._dtype).reshape(shape)

    def _range(self, first, count):
        """p(first), ..., p(first + count - 1) with the vector kernel."""
        out = np.empty(count, dtype=np.uint64)
        if count:
            lib.py_perm_range(self._p, first, count, ffi.from_buffer("uint64_t[]", out),
                              self._threads)
        return out.view(self._dtype)

    def _slice(self, s):
        sub = range(self._n)[s]  # a range holds any n, even 2**64, and checks the step
        if sub.step == 1:
            return self._range(sub.start, max(0, sub.stop - sub.start))
        idx = np.arange(len(sub), dtype=np.uint64) * np.uint64(abs(sub.step) % _U64)
        if sub.step > 0:
            idx += np.uint64(sub.start)
        else:
            idx = np.uint64(sub.start) - idx
        return self._array(idx, lib.py_perm_gather)

    def __getitem__(self, i):
        """p[i] (an int), p[a:b:c] or p[index_array] (numpy arrays)."""
        if isinstance(i, slice):
            return self._slice(i)
        if isinstance(i, (int, np.integer)):
            return self._scalar(i, lib.rf_perm_at)
        return self._array(i, lib.py_perm_gather)

    def inverse(self, j):
        """p^-1(j): the index i with p[i] == j; j an int or an index array."""
        if isinstance(j, (int, np.integer)):
            return self._scalar(j, lib.rf_perm_inverse)
        return self._array(j, lib.py_perm_inverse_gather)

    def __iter__(self):
        """p[0], p[1], ..., p[n-1] as Python ints, computed a block at a time."""
        first = 0
        while first < self._n:
            count = min(_BLOCK, self._n - first)
            yield from self._range(first, count).tolist()
            first += count

    def __contains__(self, v):
        """Whether v is a value of p: an integer in range(n)."""
        return isinstance(v, (int, np.integer)) and 0 <= v < self._n
