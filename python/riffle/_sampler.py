"""riffle.DistributedSampler: torch's DistributedSampler in O(1) memory, with
exact mid-epoch resume on any number of replicas."""
import operator
import threading

import numpy as np

from ._core import check, make_key
from ._riffle import ffi, lib

# Positions evaluated per library call while iterating.
_BLOCK = 1 << 12
# The "format" entry of a state: names what the other entries mean.
_STATE_FORMAT = "riffle.DistributedSampler/1"
_STATE_INTS = ("n", "epoch", "consumed", "stop")


def _ceil_div(a, b):
    return -((-a) // b)


def _torch_world(what):
    """torch.distributed's world size or rank, asked only when needed:
    importing riffle never imports torch."""
    try:
        import torch.distributed as dist
    except ImportError:
        raise RuntimeError("Requires distributed package to be available") from None
    if not dist.is_available():
        raise RuntimeError("Requires distributed package to be available")
    # get_world_size() and get_rank() raise themselves when the default
    # process group is not initialised, as in torch's own sampler.
    return dist.get_world_size() if what == "world" else dist.get_rank()


def _seed_entries(seed):
    """A seed as state entries that JSON and torch.load(weights_only=True)
    keep: an int or a str as it is, bytes as hex."""
    if isinstance(seed, (bytes, bytearray, memoryview)):
        return {"seed_hex": bytes(seed).hex()}
    if isinstance(seed, str):
        return {"seed": seed}
    return {"seed": operator.index(seed)}


def _state_error(what):
    return ValueError("sampler state: " + what)


def _state_seed(state):
    """The seed a state names, or ValueError."""
    if ("seed" in state) == ("seed_hex" in state):
        raise _state_error("needs exactly one of 'seed' and 'seed_hex'")
    if "seed_hex" in state:
        try:
            return bytes.fromhex(state["seed_hex"])
        except (TypeError, ValueError):
            raise _state_error("'seed_hex' is not a hexadecimal string") from None
    seed = state["seed"]
    if isinstance(seed, bool) or not isinstance(seed, (int, str)):
        raise _state_error("'seed' must be an int or a str")
    return seed


def _state_values(state, n, shuffle, drop_last):
    """(seed, epoch, consumed, stop) of a state for a sampler of n samples
    with these shuffle and drop_last, or ValueError saying what is wrong."""
    if not hasattr(state, "get") or state.get("format") != _STATE_FORMAT:
        raise _state_error("not a riffle.DistributedSampler state (no 'format': %r)"
                           % (_STATE_FORMAT,))
    for key in _STATE_INTS:
        v = state.get(key)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise _state_error("'%s' must be an int >= 0, not %r" % (key, v))
    if state["epoch"] >= 1 << 64:
        raise _state_error("'epoch' must be below 2**64")
    for key in ("shuffle", "drop_last"):
        if not isinstance(state.get(key), bool):
            raise _state_error("'%s' must be a bool" % key)
    if state["n"] != n:
        raise _state_error("saved for a dataset of %d samples, this sampler has %d"
                           % (state["n"], n))
    for key, mine in (("shuffle", shuffle), ("drop_last", drop_last)):
        if state[key] != mine:
            raise _state_error("saved with %s=%s, this sampler has %s=%s"
                               % (key, state[key], key, mine))
    consumed, stop = state["consumed"], state["stop"]
    if stop > n or (not drop_last and stop != n) or (drop_last and consumed > stop):
        raise _state_error("'consumed' %d and 'stop' %d do not fit %d samples"
                           % (consumed, stop, n))
    return _state_seed(state), state["epoch"], consumed, stop


class _SamplerCore:
    """A drop-in for torch.utils.data.distributed.DistributedSampler that
    resumes exactly, on any number of replicas.

    DistributedSampler(n_or_dataset, num_replicas=None, rank=None,
                       shuffle=True, seed=0, drop_last=False)

    Same arguments, defaults, errors, lengths and padding as torch's: each
    epoch one global order of range(n) is cut into num_replicas interleaved
    shares -- global position g goes to rank g % num_replicas -- padded to a
    multiple of num_replicas by repeating its head, or with drop_last cut
    to one.  Call set_epoch(e) before each epoch.  When torch is installed
    the class is a subclass of torch's DistributedSampler (so of
    torch.utils.data.Sampler); riffle imports torch on the first use of
    this name, never on `import riffle`.

    The order of epoch e is the keyed permutation riffle.Permutation(n)
    under a key of its own for every (seed, epoch) pair -- the first 32
    bytes of the ChaCha20 substream e of the seed's key (seed by the
    program's --seed rule) -- evaluated a block at a time as it is iterated:
    memory is O(1) in n (torch's randperm holds 8n bytes on every rank), and
    the order depends on (seed, epoch, n) only -- never on the number of
    DataLoader workers or of replicas.  seed: an int, str or bytes, never
    None (every rank must use the same one).  For n > 2**20 the permutation
    is the SipHash Feistel cipher (pseudo-random); up to 2**20 an exact
    table of at most 8 MiB.  The orders differ from torch's.

    state_dict(consumed=None) / load_state_dict(state): the position in the
    epoch's global order that all ranks together have reached, with the
    seed and epoch, as a dict of ints, strs and bools.  Loaded into a
    sampler of any num_replicas it continues the same global order from
    there, each position once, in O(1).  len() is the length of the
    current pass: shorter after a mid-epoch load.  docs/python.md says
    what `consumed` must count when DataLoader workers read ahead.

    n_or_dataset: an int, or anything with len().
    """

    def __init__(self, n_or_dataset, num_replicas=None, rank=None, shuffle=True,
                 seed=0, drop_last=False):
        if num_replicas is None:
            num_replicas = _torch_world("world")
        if rank is None:
            rank = _torch_world("rank")
        num_replicas, rank = operator.index(num_replicas), operator.index(rank)
        if num_replicas < 1:
            raise ValueError("num_replicas must be at least 1")
        if rank >= num_replicas or rank < 0:
            raise ValueError("Invalid rank {}, rank should be in the interval"
                             " [0, {}]".format(rank, num_replicas - 1))
        if isinstance(n_or_dataset, (int, np.integer)):
            self.dataset = None
            n = operator.index(n_or_dataset)
        else:
            self.dataset = n_or_dataset
            n = len(n_or_dataset)
        if n < 0:
            raise ValueError("the dataset size must be >= 0")
        self.n = n
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = bool(drop_last)
        self.shuffle = bool(shuffle)
        # torch's rule, in exact integer arithmetic: a whole epoch's share.
        if drop_last and n % num_replicas != 0:
            self.num_samples = _ceil_div(n - num_replicas, num_replicas)
        else:
            self.num_samples = _ceil_div(n, num_replicas)
        self.total_size = self.num_samples * num_replicas
        if self.total_size + num_replicas >= 1 << 63:
            raise ValueError("the dataset is too large")
        self._set_seed(seed)
        self._restart(0, n)

    def _set_seed(self, seed):
        if seed is None:
            # an OS key differs on every rank: the shares would overlap
            raise ValueError("seed cannot be None: every rank must use the same seed")
        key = make_key(seed)
        self.seed = seed
        self._seed_key = key if self.shuffle else None

    def _restart(self, start, stop):
        """Begin a pass of the current epoch at global position start; its
        samples end at stop (n, or the cut of a drop_last run resumed)."""
        self._start, self._stop = start, stop
        # Indices yielded by the latest iterator; an older one counts into
        # its own list, not this one.
        self._progress = [0]

    def __getstate__(self):
        """Picklable (for checkpoints and spawned processes): the key is
        made again from the seed."""
        state = dict(self.__dict__)
        del state["_seed_key"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if "_start" not in state:  # pickled before resume existed
            self._restart(0, self.n)
        self._seed_key = make_key(self.seed) if self.shuffle else None

    def set_epoch(self, epoch):
        """Set the epoch: epoch e's order is keyed by (seed, e).  Setting the
        epoch a loaded state is in keeps its resume point; any other epoch
        starts at its beginning."""
        if epoch != self.epoch:
            self._restart(0, self.n)
        self.epoch = epoch

    def _pass_length(self):
        """This rank's samples from the pass's start: the rest of the
        epoch's samples (stop - start, each once) cut into num_replicas
        equal shares -- padded by repeating the epoch's head, or with
        drop_last cut -- as torch's rule does for a whole epoch."""
        left = max(0, self._stop - self._start)
        if self.drop_last:
            return left // self.num_replicas
        return _ceil_div(left, self.num_replicas)

    def __len__(self):
        return self._pass_length()

    def _permutation(self, epoch):
        """The epoch's rf_perm (a cffi pointer, freed by the GC)."""
        epoch = operator.index(epoch)
        if not 0 <= epoch < 1 << 64:
            raise ValueError("epoch must be in [0, 2**64)")
        key = ffi.new("uint8_t[32]")
        check(lib.py_epoch_key(self._seed_key, epoch, key), "sampler key")
        status = ffi.new("rf_status *")
        p = lib.rf_perm_new(key, self.n - 1, lib.RF_PERM_AUTO, status)
        ffi.memmove(key, b"\0" * 32, 32)
        if p == ffi.NULL:
            check(status[0], "cannot make the permutation")
        return ffi.gc(p, lib.rf_perm_free)

    def _blocks(self):
        """This rank's indices of the current pass as int64 arrays of up to
        _BLOCK each: global positions start + rank, start + rank + R, ...
        taken mod n (positions past n are the padding).  The pass is fixed
        when this is called, as torch's __iter__ fixes its list."""
        n, step, count = self.n, self.num_replicas, self._pass_length()
        first = self._start + self.rank
        p = self._permutation(self.epoch) if self.shuffle and count else None
        return self._block_gen(p, n, first, step, count)

    @staticmethod
    def _block_gen(p, n, first, step, count):
        out = np.empty(_BLOCK, dtype=np.int64)
        buf = ffi.from_buffer("int64_t[]", out)
        done = 0
        while done < count:
            k = min(_BLOCK, count - done)
            q = first + done * step
            if p is not None:
                lib.py_perm_strided(p, n, q, step, k, buf)
                yield out[:k].copy()
            else:
                yield np.arange(q, q + k * step, step, dtype=np.int64) % n
            done += k

    def __iter__(self):
        """This rank's indices for the current pass, as Python ints."""
        progress = [0]
        self._progress = progress
        return self._counted(self._blocks(), progress)

    @staticmethod
    def _counted(blocks, progress):
        for block in blocks:
            for i in block.tolist():
                progress[0] += 1
                yield i

    def indices(self):
        """This rank's indices for the current pass as one int64 array
        (8 bytes each: for checks and small datasets)."""
        blocks = list(self._blocks())
        return np.concatenate(blocks) if blocks else np.empty(0, dtype=np.int64)

    def state_dict(self, consumed=None):
        """Where the epoch's global order stands, as a dict of ints, strs
        and bools (for torch.save or JSON): format, n, shuffle, drop_last,
        seed (or seed_hex for bytes), epoch, consumed and stop.

        consumed: the indices of the current pass this rank's training loop
        has used, the same count on every rank (they step together); then
        every rank returns the same state.  None: the number the sampler's
        latest iterator has yielded, which is exact when nothing reads
        ahead of the loop (a DataLoader with num_workers=0, or one that asks
        for this state at the batch it returned, as torchdata's
        StatefulDataLoader does).  A DataLoader with workers has taken
        prefetch_factor * num_workers batches more than the loop used: pass
        consumed then.  The state's consumed is global: the pass's start
        plus consumed * num_replicas."""
        count = self._pass_length()
        yielded = self._progress[0]
        if consumed is None:
            consumed = yielded
        else:
            consumed = operator.index(consumed)
            if consumed < 0:
                raise ValueError("consumed must be >= 0")
            if consumed > count:
                raise ValueError("consumed %d is past the end of this rank's pass (%d samples):"
                                 " count a short last batch by its length" % (consumed, count))
            if consumed > yielded:
                raise ValueError("consumed %d is more than the %d indices this sampler has"
                                 " yielded in this pass (count this rank's samples, not"
                                 " all ranks')" % (consumed, yielded))
        reached = self._start + consumed * self.num_replicas
        state = {"format": _STATE_FORMAT, "n": self.n, "shuffle": self.shuffle,
                 "drop_last": self.drop_last, "epoch": operator.index(self.epoch),
                 "consumed": reached,
                 "stop": min(self._start + count * self.num_replicas, self.n)}
        state.update(_seed_entries(self.seed))
        return state

    def load_state_dict(self, state):
        """Continue from a state_dict(), saved on any number of replicas:
        sets the seed and the epoch, and makes the next pass of that epoch
        start at the state's global position.  A state of another dataset
        size, shuffle or drop_last is refused (ValueError), and the sampler
        is then left as it was."""
        seed, epoch, consumed, stop = _state_values(state, self.n, self.shuffle,
                                                    self.drop_last)
        self._set_seed(seed)
        self.epoch = epoch
        self._restart(consumed, stop)


_class_lock = threading.Lock()
_class = None


def sampler_class():
    """riffle.DistributedSampler: made once, on first use, as a subclass of
    torch's DistributedSampler when torch can be imported (frameworks that
    check the type -- Lightning leaves a DistributedSampler in place and
    wraps any other sampler in a second sharding -- then accept it), else
    of nothing but the core.  Named riffle.DistributedSampler so pickle
    finds it again."""
    global _class
    with _class_lock:
        if _class is None:
            try:
                from torch.utils.data.distributed import DistributedSampler as base
                bases = (_SamplerCore, base)
            except ImportError:
                bases = (_SamplerCore,)
            _class = type("DistributedSampler", bases,
                          {"__module__": "riffle", "__qualname__": "DistributedSampler",
                           "__doc__": _SamplerCore.__doc__})
        return _class
