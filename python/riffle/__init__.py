"""riffle: fair, fast shuffling for Python, on libriffle.

    Generator(seed=None, rng="chacha20")   numpy-style shuffle, permutation,
                                           integers, choice, random
    Permutation(n, seed=None)              a keyed bijection on range(n),
                                           n up to 2**64, in O(1) memory
    DistributedSampler(n_or_dataset, ...)  torch's DistributedSampler in O(1)
                                           memory, independent of workers,
                                           resumable on any number of replicas
    shuffle_file(inputs, output, ...)      the riffle program's shuffle of
    split_file(inputs, outputs, ...)       files larger than memory, splits
    RecordFile(path, delimiter=b"\\n")      random access to the records of a
                                           file: a map-style dataset
    keyed_order(n, seed)                   the order riffle --seed gives n lines
    fair_deal(server_seed, client_seed, nonce, n=52)
    fair_commit(server_seed)               the provably fair deal of riffle
                                           deal --commit / riffle verify

Seeds follow the riffle program's --seed rule, and seeded results equal the
program's (docs/python.md says which call matches which command).  Importing
riffle imports numpy and cffi's module only (never torch); the first use of
riffle.DistributedSampler imports torch, when it is installed, to subclass
its sampler.
"""
from ._loader import load as _load

_ffi, _lib = _load()
from ._generator import Generator
from ._permutation import Permutation
from ._files import shuffle_file, split_file, parse_memory
from ._records import RecordFile
from ._keyed import keyed_order
from ._fair import fair_commit, fair_deal

__all__ = ["Generator", "Permutation", "DistributedSampler", "RecordFile", "shuffle_file",
           "split_file", "keyed_order", "fair_commit", "fair_deal", "parse_memory",
           "library_version"]
__version__ = _ffi.string(_lib.rf_version()).decode()


def library_version():
    """The version of libriffle this package was built with, e.g. "0.1.0"."""
    return __version__


def __getattr__(name):
    """riffle.DistributedSampler, made on first use (PEP 562), so that
    `import riffle` does not import torch."""
    if name == "DistributedSampler":
        from ._sampler import sampler_class
        cls = globals()[name] = sampler_class()
        return cls
    raise AttributeError("module 'riffle' has no attribute %r" % name)


def __dir__():
    return sorted(set(globals()) | {"DistributedSampler"})
