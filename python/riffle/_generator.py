"""riffle.Generator: numpy-style draws and shuffles from libriffle."""
import operator
import threading

import numpy as np

from ._core import check, make_key, rng_kind
from ._riffle import ffi, lib

_U64 = 1 << 64
_I64_MIN = -(1 << 63)
_I64_MAX = (1 << 63) - 1


def _count(size):
    """(shape, number of values) of a numpy-style size argument."""
    shape = (operator.index(size),) if np.ndim(size) == 0 else tuple(
        operator.index(s) for s in size)
    if any(s < 0 for s in shape):
        raise ValueError("negative dimensions are not allowed")
    k = 1
    for s in shape:
        k *= s
    return shape, k


class Generator:
    """A seeded (or OS-keyed) random generator with numpy's shuffle API.

    Generator(seed=None, rng="chacha20", threads=0)

    seed: an int, str or bytes, read by the riffle program's --seed rule
    (rf_seed_text: decimal digits up to 2**64-1 are the integer seed, any
    other text a string seed, so 7, "7" and "007" are one seed and -1 is the
    string "-1"); None keys the generator from the operating system (for
    ChaCha20 with a generator that rekeys itself in a fork()ed child, such as
    a DataLoader worker, so parent and children never repeat each other).
    rng: "chacha20" (the secure default), "xoshiro256++" or "pcg64".
    threads: threads for shuffles of large arrays (0: one per CPU); the
    result never depends on it.

    The stream: every method draws from one generator,
    rf_rng_init(rng, key(seed), stream 0) -- the generator that
    `riffle --seed=S --rng=R -r` and `riffle sample --seed=S` use -- in call
    order, as numpy's Generator does.  So integers(lo, hi, size=k) as the
    first call gives the numbers of `riffle --seed=S -r -i lo-(hi-1) -n k`.
    shuffle and permutation take 4 words (a key) and do the library's bucket
    shuffle (rf_shuffle_parallel): exactly uniform, and the same permutation
    for any dtype, shape, memory layout and thread count.

    One Generator may be shared by threads: calls are serialised by a lock,
    and the GIL is released while the library works.
    """

    def __init__(self, seed=None, rng="chacha20", threads=0):
        kind = rng_kind(rng)
        self._threads = operator.index(threads)
        if self._threads < 0:
            raise ValueError("threads must be >= 0")
        self._lock = threading.Lock()
        self._rng_name = ffi.string(lib.rf_rng_kind_name(kind)).decode()
        if seed is None and kind == lib.RF_RNG_CHACHA20:
            status = ffi.new("rf_status *")
            g = lib.rf_rng_new_os(status)
            if g == ffi.NULL:
                check(status[0], "cannot start the generator")
            self._g = ffi.gc(g, lib.rf_rng_free)
        else:
            key = make_key(seed)
            self._g = ffi.new("rf_rng *")
            check(lib.rf_rng_init(self._g, kind, key, 0), "cannot start the generator")
            ffi.memmove(key, b"\0" * 32, 32)

    @property
    def rng(self):
        """The generator's name ("chacha20", "xoshiro256++", "pcg64")."""
        return self._rng_name

    def __repr__(self):
        return "riffle.Generator(rng=%r)" % self._rng_name

    # ---- shuffles ----

    def _shuffle_bytes(self, buf, n, size):
        """rf_shuffle_parallel on n elements of size bytes at buf."""
        check(lib.rf_shuffle_parallel(self._g, buf, n, size, self._threads, ffi.NULL),
              "shuffle")

    def _index(self, n):
        """The permutation of range(n) that shuffle applies to n rows: out[t]
        is the row that goes to place t."""
        idx = np.arange(n, dtype=np.int64)
        with self._lock:
            self._shuffle_bytes(ffi.from_buffer(idx), n, 8)
        return idx

    def shuffle(self, x):
        """Shuffle x in place along its first axis.

        x: a numpy array of any dtype and shape (rows of a 2-D array move
        whole; non-contiguous views are shuffled through their base), a list,
        or any mutable sequence.  Every one of the n! orders is equally likely.
        The permutation depends on the generator's state and len(x) only:
        shuffle(a) and shuffle(b) from equal states move rows alike.
        """
        if isinstance(x, np.ndarray):
            if x.ndim == 0:
                raise TypeError("cannot shuffle a 0-d array")
            if not x.flags.writeable:
                raise ValueError("array is read-only")
            n = x.shape[0]
            row = x.itemsize * (x.size // n if n else 0)
            if x.flags.c_contiguous and not x.dtype.hasobject and row > 0:
                with self._lock:
                    self._shuffle_bytes(ffi.from_buffer(x, require_writable=True), n, row)
            else:
                # object references must be moved by numpy (reference
                # counts); other layouts are gathered through an index.
                x[...] = x[self._index(n)]
            return None
        n = len(x)
        idx = self._index(n)
        items = list(x)
        if isinstance(x, list):
            x[:] = [items[i] for i in idx]
        else:
            for t, i in enumerate(idx):
                x[t] = items[i]
        return None

    def permutation(self, x):
        """A shuffled copy: permutation(n) is a shuffled np.arange(n) (int64);
        permutation(array) shuffles a copy of the array along axis 0.
        permutation(n) equals shuffle of np.arange(n) from the same state."""
        if isinstance(x, (int, np.integer)):
            n = operator.index(x)
            if n < 0:
                raise ValueError("n must be >= 0")
            return self._index(n)
        a = np.array(x, copy=True)
        if a.ndim == 0:
            raise TypeError("x must be an integer or at least 1-dimensional")
        self.shuffle(a)
        return a

    # ---- draws ----

    def integers(self, low, high=None, size=None):
        """Uniform integers in [low, high) -- [0, low) when high is None --
        exactly unbiased (rf_below: Lemire's rejection), high - low up to
        2**64.  size None gives a Python int, else an array of that shape:
        int64 when the range fits, uint64 when only that does.
        The draws are those of `riffle -r -i LO-HI`: integers(lo, hi, size=k)
        on a fresh Generator(S) is `riffle --seed=S -r -i lo-(hi-1) -n k`."""
        if high is None:
            low, high = 0, low
        low, high = operator.index(low), operator.index(high)
        span = high - low
        if span < 1:
            raise ValueError("high must be greater than low")
        if span > _U64:
            raise ValueError("high - low must be at most 2**64")
        if low >= _I64_MIN and high - 1 <= _I64_MAX:
            dtype = np.int64
        elif low >= 0 and high - 1 < _U64:
            dtype = np.uint64
        else:
            raise ValueError("the values must fit in int64 or uint64")
        shape, k = _count(1 if size is None else size)
        out = np.empty(k, dtype=np.uint64)
        buf = ffi.from_buffer("uint64_t[]", out)
        with self._lock:
            if span == _U64:
                lib.py_fill_words(self._g, buf, k)
            else:
                lib.py_fill_below(self._g, span, buf, k)
        if size is None:
            return low + int(out[0])
        out += np.uint64(low % _U64)  # modulo 2**64: exact for either dtype
        return out.view(dtype).reshape(shape)

    def choice(self, a, k=None, replace=False):
        """k items of a (an int n: range(n), n < 2**64; or an array-like:
        its rows), in random order.

        replace=False: k distinct items, each of the n!/(n-k)! orders equally
        likely, in O(k) time and memory whatever n is (rf_sample: a
        Fisher-Yates stopped after k steps on a virtual array).  replace=True:
        k independent uniform items (integers(n, size=k)).  k None gives one
        item instead of an array.  The draws are unbatched rf_below, so
        choice(n, k) is the head of choice(n, k') from the same state."""
        pop = None
        if isinstance(a, (int, np.integer)):
            n = operator.index(a)
        else:
            pop = np.asarray(a)
            if pop.ndim == 0:
                raise ValueError("a must be an integer or at least 1-dimensional")
            n = pop.shape[0]
        if n < 1 or n > _U64:
            raise ValueError("the population must have 1 to 2**64 items")
        kk = 1 if k is None else operator.index(k)
        if kk < 0:
            raise ValueError("k must be >= 0")
        if replace:
            idx = self.integers(n, size=kk)
        else:
            if kk > n:
                raise ValueError("cannot take %d items of %d without replacement" % (kk, n))
            if n >= _U64:
                raise ValueError("without replacement the population is at most 2**64 - 1")
            out = np.empty(kk, dtype=np.uint64)
            with self._lock:
                check(lib.rf_sample(self._g, n, kk, ffi.from_buffer("uint64_t[]", out),
                                    ffi.NULL, 0), "choice")
            idx = out.view(np.int64) if n - 1 <= _I64_MAX else out
        if pop is not None:
            res = pop[idx]
            return res[0] if k is None else res
        return int(idx[0]) if k is None else idx

    def random(self, size=None):
        """Uniform floats in [0, 1) with 53 random bits each (rf_double);
        a float for size None, else a float64 array of that shape."""
        shape, k = _count(1 if size is None else size)
        out = np.empty(k, dtype=np.float64)
        with self._lock:
            lib.py_fill_double(self._g, ffi.from_buffer("double[]", out), k)
        return float(out[0]) if size is None else out.reshape(shape)
