"""riffle.DistributedSampler: torch's lengths and padding, a partition of
range(n) per epoch, per-epoch orders, independence of DataLoader workers,
O(1) memory."""
import itertools
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

import riffle
from conftest import child_env

CASES = [(n, r) for n in [0, 1, 2, 5, 10, 11, 97, 1000] for r in [1, 2, 3, 4, 8, 13]]


def expected_sizes(n, replicas, drop_last):
    """torch's rule: drop_last with a remainder cuts to the largest multiple
    of replicas; otherwise every rank gets ceil(n / replicas)."""
    if drop_last and n % replicas:
        per = (n - replicas + replicas - 1) // replicas if n >= replicas else 0
    else:
        per = -(-n // replicas)
    return per, per * replicas


def interleave(samplers):
    per = [s.indices().tolist() for s in samplers]
    return [per[r][j] for j in range(len(per[0])) for r in range(len(per))]


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("n,replicas", CASES)
def test_partition_and_padding(n, replicas, drop_last):
    ss = [riffle.DistributedSampler(n, replicas, r, seed=3, drop_last=drop_last)
          for r in range(replicas)]
    for s in ss:
        s.set_epoch(2)
    per, total = expected_sizes(n, replicas, drop_last)
    assert all(len(s) == per and len(list(s)) == per for s in ss)
    merged = interleave(ss) if per else []
    assert len(merged) == total
    if n == 0:
        return
    head = merged[:min(n, total)]
    assert len(set(head)) == len(head) and all(0 <= i < n for i in head)
    if drop_last:
        assert total <= n  # the tail is cut: ranks disjoint
    else:
        assert sorted(head) == list(range(n))  # union of ranks == range(n)
        # padding repeats the head of the epoch's order
        assert merged[n:] == [merged[q % n] for q in range(n, total)]


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("n,replicas", CASES)
def test_unshuffled_equals_torch(n, replicas, drop_last):
    torch = pytest.importorskip("torch", reason="python3-torch is not installed")
    from torch.utils.data.distributed import DistributedSampler as T
    ds = list(range(n))
    for rank in range(replicas):
        t = T(ds, replicas, rank, shuffle=False, drop_last=drop_last)
        r = riffle.DistributedSampler(ds, replicas, rank, shuffle=False, drop_last=drop_last)
        assert len(r) == len(t) and list(r) == list(t)
    assert torch  # imported


@pytest.mark.parametrize("n", [1, 5, 1000, 2**20 + 3])
def test_one_global_order_for_every_replica_count(n):
    """Every replica count cuts the same global order of the epoch (small
    counts read it through the vector kernel, larger ones position by
    position): the interleaved shares agree on their first n positions."""
    def merged(replicas):
        ss = [riffle.DistributedSampler(n, replicas, r, seed="g") for r in range(replicas)]
        for s in ss:
            s.set_epoch(1)
        per = [s.indices() for s in ss]
        return np.stack(per, axis=1).reshape(-1)[:n]
    ref = merged(1)
    assert sorted(ref.tolist()) == list(range(n))
    for replicas in [2, 3, 4, 5, 8]:
        assert np.array_equal(merged(replicas), ref)


def test_epochs_and_seeds():
    def order(seed, epoch):
        s = riffle.DistributedSampler(1000, 1, 0, seed=seed)
        s.set_epoch(epoch)
        return list(s)
    assert order(0, 0) == order(0, 0)
    assert order(0, 0) != order(0, 1)
    assert order(0, 1) != order(1, 0)  # (seed, epoch) pairs, not seed + epoch
    assert order(0, 5) != order(7, 5)
    assert sorted(order(0, 3)) == list(range(1000))


def test_large_n_is_constant_memory():
    n = 10**9
    tracemalloc.start()
    s = riffle.DistributedSampler(n, 8, 3, seed=1)
    s.set_epoch(4)
    top = max(itertools.islice(iter(s), 200000))  # nothing kept but the max
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1 << 20
    assert len(s) == n // 8 and top < n
    first = list(itertools.islice(iter(s), 100000))
    assert len(set(first)) == len(first)


def test_errors_like_torch():
    with pytest.raises(ValueError, match="Invalid rank"):
        riffle.DistributedSampler(10, 2, 2)
    with pytest.raises(ValueError, match="Invalid rank"):
        riffle.DistributedSampler(10, 2, -1)
    with pytest.raises(ValueError, match="same seed"):
        riffle.DistributedSampler(10, 2, 0, seed=None)
    code = ("import riffle\n"
            "try:\n    riffle.DistributedSampler(10)\n"
            "except (RuntimeError, ValueError) as e:\n    print('refused', type(e).__name__)\n")
    out = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, check=True,
                         env=child_env(),
                         text=True).stdout
    assert out.startswith("refused")


def _loader_epochs(workers, n=103, replicas=2, epochs=2):
    import torch.utils.data as tud
    ds = list(range(n))
    got = []
    for rank in range(replicas):
        s = riffle.DistributedSampler(ds, replicas, rank, seed=11)
        for e in range(epochs):
            s.set_epoch(e)
            loader = tud.DataLoader(ds, batch_size=7, sampler=s, num_workers=workers)
            got.append([int(v) for b in loader for v in b])
    return got


def test_real_dataloader_two_workers():
    pytest.importorskip("torch", reason="python3-torch is not installed")
    two = _loader_epochs(2)
    assert two == _loader_epochs(0)  # independent of the number of workers
    n = 103
    for e in range(2):
        union = two[e] + two[2 + e]  # rank 0 and rank 1 of epoch e
        assert sorted(set(union)) == list(range(n))  # every index, padding aside
        assert len(union) == 104 and len(set(union)) == n
    assert two[0] != two[1]


def test_pickle_round_trip():
    import pickle
    s = riffle.DistributedSampler(1000, 4, 1, seed="run")
    s.set_epoch(3)
    t = pickle.loads(pickle.dumps(s))
    assert list(t) == list(s) and t.epoch == 3
    p = riffle.Permutation(10**9, "k")
    assert pickle.loads(pickle.dumps(p))[0:10].tolist() == p[0:10].tolist()
    with pytest.raises(TypeError):
        pickle.dumps(riffle.Permutation(10))
