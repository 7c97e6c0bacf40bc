"""riffle.DistributedSampler: torch's DistributedSampler in O(1) memory."""
import operator

import numpy as np

from ._core import check, make_key
from ._riffle import ffi, lib

# Positions evaluated per library call while iterating.
_BLOCK = 1 << 12


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


class DistributedSampler:
    """A drop-in for torch.utils.data.distributed.DistributedSampler.

    DistributedSampler(n_or_dataset, num_replicas=None, rank=None,
                       shuffle=True, seed=0, drop_last=False)

    Same arguments, defaults, errors, lengths and padding as torch's: each
    epoch one global order of range(n) is cut into num_replicas interleaved
    shares (rank, rank + num_replicas, ...); without drop_last the order is
    padded to a multiple of num_replicas by repeating its head, with
    drop_last its tail is cut.  Call set_epoch(e) before each epoch.

    The difference: the order of epoch e is the keyed permutation
    riffle.Permutation(n) under a key of its own for every (seed, epoch)
    pair -- the first 32 bytes of the ChaCha20 substream e of the seed's key
    (seed by the program's --seed rule) -- evaluated a block at a time as
    it is iterated, so memory is O(1) in n (torch's randperm holds 8n bytes
    on every rank), and the order depends on (seed, epoch, n) only: never on
    the number of DataLoader workers or on anything else.  seed: an int,
    str or bytes, never None (every rank must use the same one).  For n > 2**20 the permutation is
    the SipHash Feistel cipher (pseudo-random); up to 2**20 an exact table of
    at most 8 MiB.  The orders differ from torch's (which come from torch's
    own generator).

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
        if seed is None:
            # an OS key differs on every rank: the shares would overlap
            raise ValueError("seed cannot be None: every rank must use the same seed")
        self.n = n
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        self.shuffle = shuffle
        self.seed = seed
        # torch's rule, in exact integer arithmetic.
        if drop_last and n % num_replicas != 0:
            self.num_samples = _ceil_div(n - num_replicas, num_replicas)
        else:
            self.num_samples = _ceil_div(n, num_replicas)
        self.total_size = self.num_samples * num_replicas
        if self.total_size + num_replicas >= 1 << 63:
            raise ValueError("the dataset is too large")
        self._seed_key = make_key(seed) if shuffle else None

    def __getstate__(self):
        """Picklable (for checkpoints and spawned processes): the key is
        made again from the seed."""
        state = dict(self.__dict__)
        del state["_seed_key"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._seed_key = make_key(self.seed) if self.shuffle else None

    def set_epoch(self, epoch):
        """Set the epoch: epoch e's order is keyed by (seed, e)."""
        self.epoch = epoch

    def __len__(self):
        return self.num_samples

    def _permutation(self):
        """The epoch's rf_perm (a cffi pointer, freed by the GC)."""
        epoch = operator.index(self.epoch)
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
        """This rank's indices as int64 arrays of up to _BLOCK each."""
        n, step = self.n, self.num_replicas
        if self.num_samples == 0 or n == 0:
            return
        p = self._permutation() if self.shuffle else None
        out = np.empty(_BLOCK, dtype=np.int64)
        buf = ffi.from_buffer("int64_t[]", out)
        done = 0
        while done < self.num_samples:
            k = min(_BLOCK, self.num_samples - done)
            first = self.rank + done * step
            if p is not None:
                lib.py_perm_strided(p, n, first, step, k, buf)
                yield out[:k].copy()
            else:
                yield np.arange(first, first + k * step, step, dtype=np.int64) % n
            done += k

    def __iter__(self):
        """This rank's indices for the current epoch, as Python ints."""
        for block in self._blocks():
            yield from block.tolist()

    def indices(self):
        """This rank's indices for the current epoch as one int64 array
        (num_samples * 8 bytes: for checks and small datasets)."""
        blocks = list(self._blocks())
        return np.concatenate(blocks) if blocks else np.empty(0, dtype=np.int64)
