"""riffle.Permutation: a bijection at every size, inverse, slicing, vector
and scalar agree, equality with `riffle perm` and `riffle -i`."""
import pickle
import sys

import numpy as np
import pytest

import riffle
from conftest import numbers

U64 = 2**64


@pytest.mark.parametrize("n", [1, 2, 3, 7, 1000, 2**16 - 1, 2**16])
def test_bijection_exhaustive(n):
    p = riffle.Permutation(n, seed="bij")
    v = p[0:n]
    assert np.array_equal(np.sort(v), np.arange(n))
    assert np.array_equal(p.inverse(v), np.arange(n))
    assert list(p) == v.tolist()


@pytest.mark.parametrize("mode", ["siphash", "multiply"])
def test_cipher_modes_bijection_exhaustive(mode):
    n = 50_000
    p = riffle.Permutation(n, seed=1, mode=mode)
    assert p.mode == mode
    assert np.array_equal(np.sort(p[:]), np.arange(n))


@pytest.mark.parametrize("n", [2**20 + 1, 10**9, 10**15 + 7, 2**63 + 3, U64 - 59, U64])
def test_large_domains_sampled(n):
    p = riffle.Permutation(n, seed="big")
    assert p.n == n and p.mode == "siphash"
    rng = np.random.default_rng(0)
    idx = np.unique(rng.integers(0, min(n, U64 - 1), size=20000, dtype=np.uint64))
    idx = np.concatenate([idx, np.array([0, n - 1], dtype=np.uint64)])
    v = p[idx]
    assert int(np.max(v.astype(np.uint64))) < n
    assert len(np.unique(v)) == len(np.unique(idx))  # injective on the sample
    back = p.inverse(v.astype(np.uint64))
    assert np.array_equal(back.astype(np.uint64), idx)
    for i in [0, 1, n // 2, n - 1]:
        assert p.inverse(p[i]) == i


def test_vector_equals_scalar_and_slices():
    n = 10**12
    p = riffle.Permutation(n, seed=5)
    idx = np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 500, 17, 18, n - 1, 42])
    assert p[idx].tolist() == [p[int(i)] for i in idx]
    assert p[100:200].tolist() == [p[i] for i in range(100, 200)]
    assert p[10:50:7].tolist() == [p[i] for i in range(10, 50, 7)]
    assert p[50:10:-3].tolist() == [p[i] for i in range(50, 10, -3)]
    assert p[-5:].tolist() == [p[i] for i in range(n - 5, n)]
    assert p[-1] == p[n - 1]
    assert p[np.array([[1, 2], [3, 4]])].shape == (2, 2)
    assert p[5:5].size == 0
    with pytest.raises(IndexError):
        p[n]
    with pytest.raises(IndexError):
        p[np.array([n])]
    with pytest.raises(IndexError):
        p[-n - 1]


def test_len_and_n():
    assert len(riffle.Permutation(10, 1)) == 10
    p = riffle.Permutation(U64, 1)
    assert p.n == U64
    with pytest.raises(OverflowError):
        len(p)
    assert len(riffle.Permutation(sys.maxsize, 1)) == sys.maxsize
    assert p[U64 - 3:].dtype == np.uint64
    with pytest.raises(ValueError):
        riffle.Permutation(0)
    with pytest.raises(ValueError):
        riffle.Permutation(U64 + 1)


def test_reproducible_and_os_keyed():
    assert riffle.Permutation(10**9, "x")[0:100].tolist() == \
        riffle.Permutation(10**9, "x")[0:100].tolist()
    assert riffle.Permutation(10**9)[0:100].tolist() != \
        riffle.Permutation(10**9)[0:100].tolist()


@pytest.mark.parametrize("n", [10, 2**20, 2**20 + 1, 10**9, U64])
@pytest.mark.parametrize("seed", [42, "abc"])
def test_equals_riffle_perm(cli, n, seed):
    idx = [0, 1, 7, n // 3, n - 1]
    p = riffle.Permutation(n, seed)
    assert [p[i] for i in idx] == numbers(cli("perm", "--size", n, "--seed", seed, *idx))
    assert [p.inverse(i) for i in idx] == numbers(
        cli("perm", "--size", n, "--seed", seed, "--inverse", *idx))


@pytest.mark.parametrize("n", [2**20 + 1, 10**9, U64])
def test_head_equals_riffle_i(cli, n):
    """For n > 2^20, `riffle --seed=S -i 0-(n-1) -n k` is p[0:k]."""
    assert riffle.Permutation(n, 42)[0:2000].tolist() == \
        numbers(cli("--seed=42", "-i", "0-%d" % (n - 1), "-n", 2000))


def test_fairness_table_mode_chi_square():
    """Permutation(3) over 6000 seeds: each of the 3! orders 1000 times
    expected; 5 degrees of freedom, 99.99% quantile 25.7."""
    counts = {}
    for s in range(6000):
        key = tuple(riffle.Permutation(3, s)[0:3].tolist())
        counts[key] = counts.get(key, 0) + 1
    assert len(counts) == 6
    chi2 = sum((c - 1000) ** 2 / 1000 for c in counts.values())
    assert chi2 < 25.7


@pytest.mark.parametrize("n", [10**9, 2**64, 2**21 + 3, 2**20])
def test_slices_on_threads_equal_one_thread(n):
    """A long slice is cut into parts computed on several threads: the
    values are those of one thread, and of the scalar evaluation."""
    first = n // 3
    count = 3 * 2**17 + 5
    one = riffle.Permutation(n, seed=5, threads=1)[first:first + count]
    for threads in (2, 3, 7):
        p = riffle.Permutation(n, seed=5, threads=threads)
        got = p[first:first + count]
        assert np.array_equal(got, one)
        for i in (0, 1, 2**16 - 1, 2**16, count // 2, count - 1):
            assert int(got[i]) == p[first + i]


def test_threads_argument():
    with pytest.raises(ValueError, match="threads"):
        riffle.Permutation(10, seed=1, threads=-1)
    with pytest.raises(TypeError):
        riffle.Permutation(10, seed=1, threads=1.5)
    p = pickle.loads(pickle.dumps(riffle.Permutation(10**9, seed=1, threads=2)))
    assert np.array_equal(p[0:100], riffle.Permutation(10**9, seed=1)[0:100])
