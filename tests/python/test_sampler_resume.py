"""riffle.DistributedSampler's state: exact mid-epoch resume with a real
DataLoader, elastic resume on another number of replicas (the same global
order, each sample once), the state through JSON and torch.save, refusal
of a state that does not fit, set_epoch after a load, O(1) resume, and the
torch base class made without `import riffle` importing torch."""
import importlib.util
import io
import json
import pickle
import subprocess
import sys
import time

import pytest

import riffle
from conftest import child_env

N, BATCH, STOP_AFTER = 103, 5, 3


def sampler(n, replicas, rank, **kw):
    kw.setdefault("seed", "resume")
    return riffle.DistributedSampler(n, replicas, rank, **kw)


def epoch_order(n, epoch, **kw):
    """The epoch's global order: the one share of a single replica."""
    s = sampler(n, 1, 0, **kw)
    s.set_epoch(epoch)
    return s.indices().tolist()


def merge(shares, replicas):
    """The global stream of a pass: rank r's j-th index is the pass's
    position j * replicas + r."""
    return [shares[r][j] for j in range(len(shares[0])) for r in range(replicas)]


def loader_shares(samplers, workers, stop_after=None):
    """Each rank's indices as a real DataLoader delivers them, the loader
    left after stop_after batches when given."""
    import torch.utils.data as tud
    shares = []
    for s in samplers:
        got = []
        loader = tud.DataLoader(list(range(s.n)), batch_size=BATCH, sampler=s,
                                num_workers=workers)
        it = iter(loader)
        for b, batch in enumerate(it):
            got.extend(int(v) for v in batch)
            if stop_after is not None and b + 1 == stop_after:
                break
        del it  # stops the workers
        shares.append(got)
    return shares


def resume(state, n, replicas, epoch, **kw):
    """Fresh samplers, as after a restart, continuing from state."""
    ss = [sampler(n, replicas, r, seed="another", **kw) for r in range(replicas)]
    for s in ss:
        s.load_state_dict(state)
        s.set_epoch(epoch)  # the loop's call for the loaded epoch keeps the resume point
    return ss


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("workers", [0, 2])
def test_resume_with_dataloader_on_4_2_and_3_replicas(workers, drop_last):
    pytest.importorskip("torch", reason="python3-torch is not installed")
    epoch = 5
    full = [sampler(N, 4, r, drop_last=drop_last) for r in range(4)]
    for s in full:
        s.set_epoch(epoch)
    uninterrupted = merge(loader_shares(full, workers), 4)
    assert len(uninterrupted) == (100 if drop_last else 104)

    cut = [sampler(N, 4, r, drop_last=drop_last) for r in range(4)]
    for s in cut:
        s.set_epoch(epoch)
    seen = merge(loader_shares(cut, workers, STOP_AFTER), 4)
    consumed = STOP_AFTER * BATCH
    states = [s.state_dict(consumed=consumed) for s in cut]
    assert all(st == states[0] for st in states)  # every rank saves the same state
    state = states[0]
    g = 4 * consumed
    assert state["consumed"] == g and state["epoch"] == epoch
    assert seen == uninterrupted[:g]
    # With workers the DataLoader took batches ahead of the loop: the count
    # the sampler yielded is not what was consumed, which is why the loop
    # passes it.
    ahead = cut[0].state_dict()["consumed"]
    assert (ahead > g) if workers else (ahead == g)

    for replicas in [4, 2, 3]:
        rest = merge(loader_shares(resume(state, N, replicas, epoch, drop_last=drop_last),
                                   workers), replicas)
        if drop_last:
            # a prefix of the uninterrupted remainder, cut to a multiple of
            # the new replica count
            assert rest == uninterrupted[g:g + len(rest)]
            assert len(rest) == (100 - g) // replicas * replicas
        else:
            # every remaining sample once, in the uninterrupted order, then
            # the padding: the epoch's head, fewer than `replicas` of it
            assert rest[:N - g] == uninterrupted[g:N]
            assert rest[N - g:] == uninterrupted[:len(rest) - (N - g)]
            assert len(rest) - (N - g) < replicas
            assert sorted(seen[:g] + rest[:N - g]) == list(range(N))


def chain(n, runs, drop_last, **kw):
    """The global stream of one epoch run as `runs` [(replicas, local
    samples consumed or None for to the end), ...], each run resuming from
    the state the previous one saved."""
    stream, state = [], None
    for replicas, take in runs:
        ss = [sampler(n, replicas, r, drop_last=drop_last, **kw) for r in range(replicas)]
        for s in ss:
            s.set_epoch(1)
            if state is not None:
                s.load_state_dict(state)
        shares = [s.indices().tolist() for s in ss]
        assert all(len(x) == len(s) for x, s in zip(shares, ss))
        if take is not None:
            take = min(take, len(ss[0]))
        if take is None:
            stream += merge(shares, replicas)
            return stream
        stream += merge([x[:take] for x in shares], replicas)
        for s in ss:
            list(iter(s))  # the sampler yielded its share
        state = ss[0].state_dict(consumed=take)
        assert all(s.state_dict(consumed=take) == state for s in ss)
    raise AssertionError("the last run must finish the epoch")


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("n", [1, 7, 64, 97, 1000])
def test_elastic_chain_of_resumes(n, drop_last):
    order = epoch_order(n, 1)
    plans = [[(4, 2), (3, 5), (2, None)], [(1, 10), (8, 1), (5, None)],
             [(3, 0), (6, 3), (4, 1), (1, None)], [(8, 0), (7, None)]]
    for runs in plans:
        stream = chain(n, runs, drop_last)
        if drop_last:
            assert stream == order[:len(stream)]  # each sample at most once, in order
            assert n - len(stream) <= sum(r - 1 for r, _ in runs)
        else:
            assert stream[:n] == order  # every sample once, in order
            # then padding: the epoch's order from its head, cyclically
            assert stream[n:] == [order[q % n] for q in range(n, len(stream))]
            assert len(stream) - n < max(r for r, _ in runs)


def test_unshuffled_resume_is_torch_order_continued():
    for drop_last in [False, True]:
        stream = chain(50, [(4, 3), (3, None)], drop_last, shuffle=False)
        tail = 48 if drop_last else 50
        assert stream[:tail] == list(range(tail))


def test_state_round_trips_through_json_and_torch_save():
    torch = pytest.importorskip("torch", reason="python3-torch is not installed")
    for seed in [7, "seven", b"\xff\xfeseven"]:
        s = sampler(1000, 4, 2, seed=seed)
        s.set_epoch(9)
        it = iter(s)
        for _ in range(30):
            next(it)
        state = s.state_dict()
        want = resume(state, 1000, 3, 9)
        buf = io.BytesIO()
        torch.save(state, buf)
        buf.seek(0)
        for copy in [json.loads(json.dumps(state)), torch.load(buf)]:
            assert copy == state
            got = resume(copy, 1000, 3, 9)
            assert [list(x) for x in got] == [list(x) for x in want]
            assert got[0].seed == seed and got[0].epoch == 9


def test_pickled_sampler_keeps_its_resume_point():
    s = sampler(500, 3, 1)
    s.load_state_dict(dict(sampler(500, 2, 0).state_dict(), epoch=4, consumed=100))
    t = pickle.loads(pickle.dumps(s))
    assert type(t) is riffle.DistributedSampler
    assert list(t) == list(s) and len(t) == len(s) == 134


def mutated(state, **changes):
    out = dict(state)
    for k, v in changes.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = v
    return out


def test_mismatched_or_broken_state_is_refused():
    src = sampler(100, 4, 0, drop_last=True)
    src.set_epoch(2)
    state = src.state_dict()
    s = sampler(100, 2, 1)
    s.set_epoch(3)
    before = list(s)
    bad = [
        (sampler(99, 4, 0).state_dict(), "saved for a dataset of 99 samples, this sampler has 100"),
        (sampler(100, 4, 0, shuffle=False).state_dict(), "shuffle=False, this sampler has shuffle=True"),
        (state, "drop_last=True, this sampler has drop_last=False"),
        ([1, 2], "not a riffle.DistributedSampler state"),
        (mutated(state, format=None), "not a riffle.DistributedSampler state"),
        (mutated(state, format="riffle.DistributedSampler/0"), "not a riffle"),
        (mutated(state, epoch=None), "'epoch' must be an int >= 0"),
        (mutated(state, consumed=-4), "'consumed' must be an int >= 0"),
        (mutated(state, epoch=1 << 64), "'epoch' must be below 2\\*\\*64"),
        (mutated(state, consumed=True), "'consumed' must be an int >= 0"),
        (mutated(state, n="100"), "'n' must be an int >= 0"),
        (mutated(state, shuffle=1), "'shuffle' must be a bool"),
        (mutated(state, seed=None), "exactly one of 'seed' and 'seed_hex'"),
        (mutated(state, seed_hex="00"), "exactly one of 'seed' and 'seed_hex'"),
        (mutated(state, seed=None, seed_hex="zz"), "'seed_hex' is not a hexadecimal"),
        (mutated(state, seed=1.5), "'seed' must be an int or a str"),
    ]
    dl = sampler(100, 4, 0, drop_last=True)
    dl_before = list(dl)
    for i, (st, msg) in enumerate(bad):
        target = s if i < 3 else dl  # the broken states are otherwise dl's
        with pytest.raises(ValueError, match="sampler state: .*" + msg):
            target.load_state_dict(st)
    for st in [mutated(state, stop=101), mutated(state, consumed=state["stop"] + 4)]:
        with pytest.raises(ValueError, match="do not fit 100 samples"):
            dl.load_state_dict(st)
    with pytest.raises(ValueError, match="do not fit"):
        s.load_state_dict(mutated(sampler(100, 4, 0).state_dict(), stop=96))
    # a refused state changes nothing
    assert list(s) == before and s.epoch == 3 and s.seed == "resume"
    assert list(dl) == dl_before and dl.epoch == 0


def test_state_dict_checks_the_count_it_is_given():
    s = sampler(103, 4, 0)  # 26 per rank
    it = iter(s)
    for _ in range(10):
        next(it)
    assert s.state_dict(consumed=10)["consumed"] == 40
    with pytest.raises(ValueError, match="more than the 10 indices this sampler has yielded"):
        s.state_dict(consumed=11)
    with pytest.raises(ValueError, match="past the end of this rank's pass"):
        s.state_dict(consumed=27)
    with pytest.raises(ValueError, match=">= 0"):
        s.state_dict(consumed=-1)
    list(it)
    end = s.state_dict()
    assert end["consumed"] == 104 and end["stop"] == 103
    t = sampler(103, 2, 0)
    t.load_state_dict(end)
    assert len(t) == 0 and list(t) == []  # a finished epoch stays finished


def test_set_epoch_after_a_load():
    s = sampler(1000, 4, 3)
    s.load_state_dict(dict(sampler(1000, 4, 0).state_dict(), epoch=3, consumed=400))
    assert s.epoch == 3 and len(s) == 150
    rest = list(s)
    s.set_epoch(3)  # the loaded epoch: still resumes
    assert list(s) == rest and len(s) == 150
    fresh = sampler(1000, 4, 3)
    for e in [4, 3]:  # any other epoch, even the loaded one again later, is whole
        s.set_epoch(e)
        fresh.set_epoch(e)
        assert len(s) == 250 and list(s) == list(fresh)
    assert rest == list(fresh)[100:]
    s.set_epoch(5)
    assert s.state_dict()["consumed"] == 0 and s.state_dict()["epoch"] == 5


def test_an_older_iterator_does_not_count():
    s = sampler(100, 2, 0)
    old = iter(s)
    next(old)
    new = iter(s)
    for _ in range(3):
        next(new)
    next(old)
    assert s.state_dict()["consumed"] == 6


def test_resume_is_constant_time():
    n = 10**15
    g = n - 1000
    state = dict(sampler(n, 1, 0).state_dict(), epoch=2, consumed=g)
    t0 = time.process_time()
    whole = sampler(n, 1, 0)
    whole.load_state_dict(state)
    tail = whole.indices().tolist()
    ss = resume(state, n, 3, 2)
    shares = [s.indices().tolist() for s in ss]
    cpu = time.process_time() - t0
    assert len(tail) == 1000 and len(set(tail)) == 1000 and all(0 <= v < n for v in tail)
    assert merge(shares, 3)[:1000] == tail
    assert merge(shares, 3)[1000:] == epoch_order_head(n, 2, 2)
    assert cpu < 1.0  # a fast-forward through 10**15 positions would take years
    plain = sampler(n, 3, 1, shuffle=False)
    plain.load_state_dict(dict(plain.state_dict(), consumed=g))
    assert plain.indices().tolist() == list(range(g + 1, n, 3)) + [0]


def epoch_order_head(n, epoch, k):
    s = sampler(n, 1, 0)
    s.set_epoch(epoch)
    return [v for _, v in zip(range(k), s)]


def test_a_torch_sampler():
    torch = pytest.importorskip("torch", reason="python3-torch is not installed")
    from torch.utils.data.distributed import DistributedSampler as TorchDistributed
    s = sampler(10, 2, 0)
    assert isinstance(s, torch.utils.data.Sampler) and isinstance(s, TorchDistributed)
    assert riffle.DistributedSampler.__module__ == "riffle"
    assert riffle.DistributedSampler is riffle._sampler.sampler_class()
    assert "DistributedSampler" in dir(riffle)
    # torch's attributes, with torch's values for a whole epoch
    t = TorchDistributed(list(range(10)), 4, 3, drop_last=True)
    r = sampler(list(range(10)), 4, 3, drop_last=True)
    for name in ["num_replicas", "rank", "epoch", "drop_last", "shuffle", "num_samples",
                 "total_size"]:
        assert getattr(r, name) == getattr(t, name)


def run_python(code):
    return subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                          check=True,
                          env=child_env()).stdout


def test_import_riffle_does_not_import_torch():
    out = run_python(
        "import sys, riffle\n"
        "riffle.Generator(1).permutation(10); riffle.Permutation(10, 1)[3]\n"
        "print('torch' in sys.modules)\n"
        "riffle.DistributedSampler\n"
        "print('torch' in sys.modules)\n")
    has_torch = importlib.util.find_spec("torch") is not None
    assert out.split() == ["False", str(has_torch)]


def test_without_torch_a_plain_class_that_resumes():
    out = run_python(
        "import sys\n"
        "sys.modules['torch'] = None  # import torch now raises ImportError\n"
        "import riffle\n"
        "S = riffle.DistributedSampler\n"
        "print([c.__name__ for c in S.__mro__])\n"
        "s = S(20, 2, 1, seed=4)\n"
        "it = iter(s); [next(it) for _ in range(3)]\n"
        "t = S(20, 3, 0, seed=0); t.load_state_dict(s.state_dict())\n"
        "u = S(20, 1, 0, seed=4)\n"
        "print(len(t), list(t) == u.indices().tolist()[6::3])\n")
    assert out.split("\n")[:2] == ["['DistributedSampler', '_SamplerCore', 'object']",
                                   "5 True"]
