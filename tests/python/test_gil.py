"""Long calls release the GIL: another Python thread runs while the library
works on a large array or a file.

The test cannot pass by timing luck.  The switch interval is made longer
than the test, so the interpreter never takes the GIL from the main thread
by force: the counting thread can run only while the main thread gives the
GIL away itself.  Between reading the counter and entering the library the
main thread gives it away nowhere (no I/O, no numpy loop that releases it),
so a counter that moved means the GIL was released inside the call.  The
counting thread sleeps a millisecond between counts (which releases the GIL
too), so it never keeps the GIL from the main thread for long.  A loaded
machine may not schedule the counting thread within one call: the call is
repeated, a bounded number of times, until the counter moves."""
import os
import sys
import threading

import numpy as np
import pytest

import riffle

ATTEMPTS = 20


class Counter:
    """A thread counting until stopped."""

    def __init__(self):
        self.n = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        import time
        while not self._stop.is_set():
            self.n += 1
            time.sleep(0.001)

    def __enter__(self):
        self._interval = sys.getswitchinterval()
        sys.setswitchinterval(3600.0)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=60)  # join releases the GIL: the thread sees the stop
        sys.setswitchinterval(self._interval)
        assert not self._thread.is_alive()


def ran_during(call):
    """Whether the counting thread counted while call() ran, trying up to
    ATTEMPTS calls."""
    with Counter() as c:
        for _ in range(ATTEMPTS):
            before = c.n
            call()
            if c.n != before:
                return True
    return False


def test_shuffle_of_a_large_array_releases_the_gil():
    x = np.arange(4_000_000, dtype=np.float64)  # some 50 ms and more per shuffle
    g = riffle.Generator(1, threads=1)
    assert ran_during(lambda: g.shuffle(x))


def test_permutation_range_releases_the_gil():
    p = riffle.Permutation(10**12, seed=1)
    assert ran_during(lambda: p[0:4_000_000])


def test_shuffle_file_releases_the_gil(tmp_path):
    src = tmp_path / "in"
    src.write_bytes(b"".join(b"line %d\n" % i for i in range(200_000)))
    out = tmp_path / "out"
    with Counter() as c:
        for _ in range(ATTEMPTS):
            seen = []
            # read the counter in the run's own callbacks: the path's
            # preparation (which opens files, releasing the GIL) is outside
            riffle.shuffle_file(src, out, seed=1, threads=1,
                                progress=lambda phase, done, total: seen.append(c.n))
            assert len(seen) >= 2
            if seen[-1] != seen[0]:
                break
    assert seen[-1] != seen[0]


def test_the_check_sees_a_call_that_keeps_the_gil():
    """The same check fails for a long call that keeps the GIL (a pure
    Python loop), so the tests above can fail."""
    def busy():
        s = 0
        for i in range(200_000):
            s += i
        return s
    assert not ran_during(busy)
