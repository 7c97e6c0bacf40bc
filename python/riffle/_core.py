"""Seeds, keys and errors shared by the package's modules."""
import os

from ._riffle import ffi, lib

KEY_BYTES = 32


def library_error(status, what):
    """The Python exception for an rf_status other than RF_OK."""
    msg = "%s: %s" % (what, ffi.string(lib.rf_strerror(status)).decode())
    if status == lib.RF_ENOMEM:
        return MemoryError(msg)
    if status in (lib.RF_EINVAL, lib.RF_ERANGE):
        return ValueError(msg)
    return OSError(msg)


def check(status, what):
    """Raise library_error(status, what) unless status is RF_OK."""
    if status != lib.RF_OK:
        raise library_error(status, what)


def seed_text(seed):
    """The text of a seed as the riffle program's --seed takes it.

    int: its decimal digits (a negative int keeps its sign, so it is a string
    seed, as --seed=-1 is); str: encoded as UTF-8; bytes: as they are.  A NUL
    byte cannot be given to --seed, so it is refused here too."""
    if isinstance(seed, bool):
        raise TypeError("seed must be an int, str, bytes or None, not bool")
    if isinstance(seed, int):
        text = str(seed).encode()
    elif isinstance(seed, str):
        text = seed.encode("utf-8")
    elif isinstance(seed, (bytes, bytearray, memoryview)):
        text = bytes(seed)
    else:
        # numpy integers and other int-likes
        try:
            text = str(int(seed.__index__())).encode()
        except AttributeError:
            raise TypeError("seed must be an int, str, bytes or None, not %s"
                            % type(seed).__name__) from None
    if b"\0" in text:
        raise ValueError("a seed cannot contain a NUL byte")
    return text


def make_key(seed):
    """The 32-byte key of a seed: rf_seed_text (the program's --seed rule) of
    seed_text(seed), or rf_seed_os for None.  Returns a cffi uint8_t[32]."""
    key = ffi.new("uint8_t[32]")
    if seed is None:
        check(lib.rf_seed_os(key), "cannot get a key from the operating system")
    else:
        check(lib.rf_seed_text(key, seed_text(seed)), "cannot make the key")
    return key


def rng_kind(name):
    """The rf_rng_kind of a generator name ("chacha20", "xoshiro256++",
    "pcg64", also "chacha", "xoshiro", "pcg")."""
    if not isinstance(name, str):
        raise TypeError("rng must be a str")
    kind = ffi.new("rf_rng_kind *")
    if lib.rf_rng_kind_parse(name.encode(), kind) != lib.RF_OK:
        raise ValueError("unknown generator %r (chacha20, xoshiro256++ or pcg64)" % name)
    return kind[0]


def cpu_count():
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
