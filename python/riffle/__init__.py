"""riffle: fair, fast shuffling for Python, on libriffle.

    Generator(seed=None, rng="chacha20")   numpy-style shuffle, permutation,
                                           integers, choice, random
    Permutation(n, seed=None)              a keyed bijection on range(n),
                                           n up to 2**64, in O(1) memory
    DistributedSampler(n_or_dataset, ...)  torch's DistributedSampler in O(1)
                                           memory, independent of workers
    shuffle_file(inputs, output, ...)      the riffle program's shuffle of
    split_file(inputs, outputs, ...)       files larger than memory, splits
    RecordFile(path, delimiter=b"\\n")      random access to the records of a
                                           file: a map-style dataset
    keyed_order(n, seed)                   the order riffle --seed gives n lines

Seeds follow the riffle program's --seed rule, and seeded results equal the
program's (docs/python.md says which call matches which command).  Importing
riffle imports numpy and cffi's module only (never torch).
"""
from ._loader import load as _load

_ffi, _lib = _load()
from ._generator import Generator
from ._permutation import Permutation
from ._sampler import DistributedSampler
from ._files import shuffle_file, split_file, parse_memory
from ._records import RecordFile
from ._keyed import keyed_order

__all__ = ["Generator", "Permutation", "DistributedSampler", "RecordFile", "shuffle_file",
           "split_file", "keyed_order", "parse_memory", "library_version"]
__version__ = _ffi.string(_lib.rf_version()).decode()


def library_version():
    """The version of libriffle this package was built with, e.g. "0.1.0"."""
    return __version__
