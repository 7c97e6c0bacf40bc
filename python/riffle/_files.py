"""riffle.shuffle_file and riffle.split_file: the engine (riffle_engine.h)."""
import errno
import operator
import os
import tempfile

from ._core import make_key, rng_kind
from ._riffle import ffi, lib

_PHASES = {}


def _phase_name(phase):
    if not _PHASES:
        _PHASES.update({lib.RF_ENGINE_READ: "read", lib.RF_ENGINE_SCATTER: "scatter",
                        lib.RF_ENGINE_SHUFFLE: "shuffle", lib.RF_ENGINE_WRITE: "write"})
    return _PHASES.get(phase, "run")


def parse_memory(memory):
    """A memory budget in bytes: an int, or a string by the program's
    --memory rule (rf_engine_memory_parse: "64M", "2GB", "8kB" -- K, M, G, T
    are powers of 1024 -- or "25%" of the memory this process may use).
    None gives 0, the library's default (half of the usable memory)."""
    if memory is None:
        return 0
    if isinstance(memory, int) and not isinstance(memory, bool):
        if memory < 1 or memory >= 1 << 64:
            raise ValueError("memory must be a positive number of bytes below 2**64")
        return memory
    if not isinstance(memory, str):
        raise TypeError("memory must be an int or a str such as '64M'")
    out = ffi.new("uint64_t *")
    status = lib.rf_engine_memory_parse(memory.encode(), out)
    if status == lib.RF_ERANGE:
        raise ValueError("cannot find the size of memory for %r" % memory)
    if status != lib.RF_OK:
        raise ValueError("invalid memory size %r" % memory)
    return out[0]


def _paths(inputs):
    if isinstance(inputs, (str, bytes, os.PathLike)):
        inputs = [inputs]
    out = []
    for p in inputs:
        b = os.fsencode(p)
        if b"\0" in b:
            raise ValueError("a path cannot contain a NUL byte")
        out.append(b)
    return out


def _delim(delimiter):
    if isinstance(delimiter, str):
        delimiter = delimiter.encode()
    if not isinstance(delimiter, (bytes, bytearray)) or len(delimiter) != 1:
        raise ValueError("delimiter must be one byte, such as b'\\n' or b'\\0'")
    return delimiter[0]


class _Run:
    """One engine run: its C state, the progress callable, and the first
    exception raised inside a callback (which cancels the run)."""

    def __init__(self, progress):
        self.progress = progress
        self.exc = None
        self.c = lib.py_run_new()
        if self.c == ffi.NULL:
            raise MemoryError("cannot start the run")
        _RUNS[int(ffi.cast("uintptr_t", self.c))] = self

    def close(self):
        _RUNS.pop(int(ffi.cast("uintptr_t", self.c)), None)
        lib.py_run_free(self.c)
        self.c = ffi.NULL

    def raise_error(self, status, err, output=None):
        """The exception for a failed run (the callback's own first)."""
        if self.exc is not None:
            raise self.exc
        if status == lib.RF_ENOMEM:
            raise MemoryError("memory exhausted")
        if status == lib.RF_EINVAL:
            raise ValueError("invalid arguments")
        buf = ffi.new("char[4352]")
        lib.rf_engine_error_message(err, buf, len(buf))
        msg = ffi.string(buf).decode(errors="surrogateescape")
        code = err.err if err.err > 0 else errno.EIO
        path = ffi.string(err.path).decode(errors="surrogateescape") or None
        if err.op == lib.RF_ENGINE_OP_OUTPUT and output is not None:
            path = os.fsdecode(output)
            msg = "%s: %s" % (path, os.strerror(code))
        raise OSError(code, msg, path)


_RUNS = {}


@ffi.def_extern()
def py_on_progress(ctx, phase, done, total):
    run = _RUNS.get(int(ffi.cast("uintptr_t", ctx)))
    if run is None or run.exc is not None:
        return
    try:
        if run.progress is not None:
            run.progress(_phase_name(phase), done, total)
    except BaseException as e:  # KeyboardInterrupt included: stop the run
        run.exc = e
        lib.py_run_cancel(ctx)


def _temp_beside(output):
    """An empty temporary file in output's directory: [fd, path]."""
    out = os.fsencode(output)
    d, base = os.path.split(out)
    d = d or b"."
    fd, tmp = tempfile.mkstemp(prefix=b"." + base + b".", suffix=b".tmp", dir=d)
    return [fd, tmp]


def _engine_args(seed, rng, memory, header, delimiter, threads, count, tmpdir):
    header = operator.index(header)
    if header < 0:
        raise ValueError("header must be >= 0")
    threads = operator.index(threads)
    if threads < 0:
        raise ValueError("threads must be >= 0")
    cnt = lib.RF_ENGINE_ALL if count is None else operator.index(count)
    if cnt < 0:
        raise ValueError("count must be >= 0")
    tmp = ffi.NULL if tmpdir is None else ffi.new("char[]", os.fsencode(tmpdir))
    return dict(kind=rng_kind(rng), memory=parse_memory(memory), header=header,
                delim=_delim(delimiter), threads=threads, count=cnt,
                tmpdir=tmp, key=make_key(seed))


def shuffle_file(inputs, output, seed=None, memory=None, header=0, delimiter=b"\n",
                 threads=0, progress=None, *, rng="chacha20", count=None, tmpdir=None):
    """Shuffle the lines of one or more files into output, at any size.

    The bytes written are exactly those of
    `riffle --seed=S [--rng=R] [--header=H] [-z] [-n COUNT] INPUTS... -o OUTPUT`
    for the same seed, whatever the memory budget or thread count: files
    that fit the budget are shuffled in memory, larger ones through temporary
    bucket files (in tmpdir, else $TMPDIR, else /tmp) -- the keyed order,
    riffle.h.

    inputs: a path or a list of paths (str, bytes or os.PathLike), read as
    one stream of records.  output: a path; it is replaced atomically (a
    temporary file beside it, renamed on success), so a failed or
    interrupted call -- KeyboardInterrupt included -- leaves output as it
    was and no temporary file.  output may be one of the inputs.
    seed: int, str or bytes (the program's --seed rule), None for OS
    entropy.  memory: bytes (int) or a string like "64M" or "25%"; None: half
    of the usable memory.  header: lines copied first, unshuffled.
    delimiter: b"\\n", or b"\\0" for NUL-terminated records (-z).
    threads: 0 for one per CPU.  count: write only the first count records of
    the order (after the header), as -n.  progress: a callable
    progress(phase, done, total) with phase "read", "scatter", "shuffle" or
    "write" and done/total bytes of it (total 0: unknown); an exception it
    raises stops the run and is raised by shuffle_file.

    Errors: OSError with errno, filename and the library's message (for an
    input that is missing, a full disk, ...), ValueError for bad arguments,
    MemoryError.
    """
    paths = _paths(inputs)
    a = _engine_args(seed, rng, memory, header, delimiter, threads, count, tmpdir)
    temp = None
    committed = False
    run = None
    try:
        temp = _temp_beside(output)
        run = _Run(progress)
        cpaths = [ffi.new("char[]", p) for p in paths]
        arr = ffi.new("const char *[]", cpaths) if cpaths else ffi.NULL
        err = ffi.new("rf_engine_error *")
        status = lib.py_run_shuffle(run.c, a["key"], a["kind"], arr, len(paths), temp[0],
                                    a["delim"], a["header"], a["count"], a["memory"],
                                    a["tmpdir"], a["threads"], err)
        if status != lib.RF_OK:
            run.raise_error(status, err, output)
        if run.exc is not None:
            raise run.exc
        _commit(temp, output)
        committed = True
    finally:
        ffi.memmove(a["key"], b"\0" * 32, 32)
        if run is not None:
            run.close()
        if not committed and temp is not None:
            _discard(temp)


def _umask():
    """The process's umask, read without changing it (os.umask would, for a
    moment, for every thread)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    return 0o022


def _commit(temp, output):
    """Make the temporary file temp = [fd, path] the output: permissions as
    a new file's (umask), or the replaced output's, then fsync, close (fd
    set to -1) and rename."""
    fd, tmp = temp
    try:
        mode = os.stat(output).st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    os.fchmod(fd, mode)
    os.fsync(fd)
    temp[0] = -1
    os.close(fd)
    os.replace(tmp, os.fsencode(output))


def _discard(temp):
    """Close and remove a temporary file [fd, path] that was not renamed."""
    fd, tmp = temp
    if fd >= 0:
        temp[0] = -1
        try:
            os.close(fd)
        except OSError:
            pass
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass


def _split_error(what, value, err):
    buf = ffi.new("char[512]")
    lib.rf_split_error_message(err, buf, len(buf))
    why = ffi.string(buf).decode()
    return ValueError("invalid %s %r%s" % (what, value, ": " + why if why else ""))


def _parse_split(spec):
    """A parsed rf_split (freed by the GC) and its number of parts."""
    if not isinstance(spec, (str, int)) or isinstance(spec, bool):
        raise TypeError("split must be a str such as '80%,10%,10%' or an int")
    text = str(spec)
    s = ffi.new("rf_split *")
    err = ffi.new("rf_split_error *")
    status = lib.rf_split_parse(s, text.encode(), err)
    if status == lib.RF_ENOMEM:
        raise MemoryError("memory exhausted")
    if status != lib.RF_OK:
        raise _split_error("split", text, err)
    s = ffi.gc(s, lib.rf_split_free)
    return s, lib.py_split_parts(s)


def _part_names(outputs, parts):
    """The parts' paths (bytes): a list as given, or the library's reading
    of a pattern (one %d, or a comma-separated list of names)."""
    if isinstance(outputs, (str, bytes, os.PathLike)):
        pattern = os.fsencode(outputs)
        names = ffi.new("char ***")
        err = ffi.new("rf_split_error *")
        status = lib.rf_split_names(pattern, parts, names, err)
        if status == lib.RF_ENOMEM:
            raise MemoryError("memory exhausted")
        if status != lib.RF_OK:
            raise _split_error("output pattern", os.fsdecode(pattern), err)
        try:
            return [ffi.string(names[0][i]) for i in range(parts)]
        finally:
            lib.rf_split_names_free(names[0], parts)
    out = [os.fsencode(p) for p in outputs]
    if len(out) != parts:
        raise ValueError("%d names for %d parts" % (len(out), parts))
    if len(set(os.path.abspath(p) for p in out)) != len(out):
        raise ValueError("a name is given twice")
    return out


def split_file(inputs, outputs, split, seed=None, memory=None, header=0,
               delimiter=b"\n", threads=0, progress=None, *, rng="chacha20", count=None,
               tmpdir=None):
    """Shuffle the lines of the inputs and cut them into parts (ML splits).

    The files written are exactly those of
    `riffle --seed=S --split=SPLIT --output-pattern=OUTPUTS [--header=H] INPUTS...`:
    the shuffled records (as shuffle_file orders them) cut by the split
    plan, every part starting with the header lines.

    split: "80%,10%,10%" (percentages summing to 100), "1000,500,*" (counts;
    '*' takes the rest) or "16" / 16 (equal parts), as the program's --split.
    outputs: a pattern with one %d ("part-%02d.txt", parts numbered from 0),
    a comma-separated list of names ("train.csv,valid.csv,test.csv"), or a
    list of paths.  Every part is written to a temporary file beside it and
    all are renamed only when the whole run succeeded: a failed call leaves
    every output as it was and no temporary file.
    The other arguments are shuffle_file's.  Errors: as shuffle_file's;
    ValueError for a bad split or pattern, or counts that do not fit the
    number of records.
    """
    paths = _paths(inputs)
    spl, parts = _parse_split(split)
    names = _part_names(outputs, parts)
    a = _engine_args(seed, rng, memory, header, delimiter, threads, count, tmpdir)
    temps = []
    committed = False
    run = None
    try:
        for name in names:
            temps.append(_temp_beside(name))
        run = _Run(progress)
        cpaths = [ffi.new("char[]", p) for p in paths]
        arr = ffi.new("const char *[]", cpaths) if cpaths else ffi.NULL
        fds = ffi.new("int[]", [t[0] for t in temps])
        err = ffi.new("rf_engine_error *")
        serr = ffi.new("rf_split_error *")
        part = ffi.new("size_t *")
        status = lib.py_run_split(run.c, a["key"], a["kind"], arr, len(paths), spl, fds,
                                  a["delim"], a["header"], a["count"], a["memory"],
                                  a["tmpdir"], a["threads"], err, serr, part)
        if status != lib.RF_OK and run.exc is None and serr.problem != lib.RF_SPLIT_OK:
            raise _split_error("split", str(split), serr)
        if status != lib.RF_OK:
            run.raise_error(status, err, names[part[0]] if part[0] < len(names) else None)
        if run.exc is not None:
            raise run.exc
        for temp, name in zip(temps, names):
            _commit(temp, name)
        committed = True
    finally:
        ffi.memmove(a["key"], b"\0" * 32, 32)
        if run is not None:
            run.close()
        if not committed:
            for temp in temps:  # a renamed one is gone: nothing to remove
                _discard(temp)
