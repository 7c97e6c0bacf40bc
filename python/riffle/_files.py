"""riffle.shuffle_file and riffle.split_file: the engine (riffle_engine.h)."""
import errno
import operator
import os

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


def _refuse_compressed(paths):
    """A gzip or zstd input would be shuffled as its compressed bytes: the
    library reads inputs as they are (the program decompresses; this
    package does not)."""
    c = ffi.new("rf_compression *")
    for p in paths:
        if lib.rf_compression_of_path(p, c) == 0 and c[0] != lib.RF_COMPRESSION_NONE:
            name = ffi.string(lib.rf_compression_name(c[0])).decode()
            raise ValueError("%s: %s-compressed input: decompress it first (the riffle "
                             "program reads it as it is)" % (os.fsdecode(p), name))


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
        buf = ffi.new("char[4352]")
        lib.rf_engine_error_message(err, buf, len(buf))
        msg = ffi.string(buf).decode(errors="surrogateescape")
        if status == lib.RF_ENOMEM:
            raise MemoryError(msg)
        if status == lib.RF_EINVAL and err.op == lib.RF_ENGINE_OP_NONE:
            raise ValueError(msg)  # arguments the engine refused; with a file, an OSError
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


class _Output:
    """An output file opened as the riffle program opens -o FILE
    (rf_atomic_open, riffle_io.h): a regular file (or a new name) is written
    to a temporary file in its directory -- unnamed (O_TMPFILE) where the
    file system allows, so not even a killed process leaves it -- and put in
    place by commit: fsync, then rename over the name; a symbolic link is
    followed, its target replaced and the link kept.  Anything else (a
    device such as /dev/null, a FIFO, /dev/stdout) is written in place:
    renaming over it would replace the name instead of writing to what it
    names."""

    def __init__(self, name):
        self.name = os.fsdecode(name)
        path = os.fsencode(name)
        if b"\0" in path:
            raise ValueError("a path cannot contain a NUL byte")
        self._a = ffi.new("rf_atomic_file *")
        e = lib.rf_atomic_open(self._a, path)
        if e:
            raise self.error(e)
        self._open = True

    @property
    def fd(self):
        return self._a.fd

    def error(self, e, more=""):
        return OSError(e, "%s: %s%s" % (self.name, os.strerror(e), more), self.name)

    def sync(self):
        """fsync a staged file, so that its rename is the only step left."""
        if lib.rf_atomic_staged(self._a):
            try:
                os.fsync(self._a.fd)
            except OSError as e:
                raise self.error(e.errno) from None

    def commit(self):
        """Put the file in place (fsync, rename; close for one written in
        place).  0 or an errno value; on failure the temporary is removed
        and the name keeps what it had."""
        self._open = False
        return lib.rf_atomic_commit(self._a)

    def abort(self):
        """Remove the temporary (unless committed): the name keeps what it
        had."""
        if self._open:
            self._open = False
            lib.rf_atomic_abort(self._a)


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
    one stream of records.  output: a path, opened as the program's -o
    opens it.  A regular file (or a new name) is replaced atomically: a
    temporary file beside it (unnamed where the file system allows),
    fsynced and renamed on success, so a failed or interrupted call --
    KeyboardInterrupt included -- leaves output as it was and no temporary
    file; it gets the replaced file's permission bits (and owner, where
    allowed), or 0666 less the umask.  output may be one of the inputs.  A
    symbolic link is followed: its target is replaced, the link kept.  An
    output that is not a regular file (/dev/null, /dev/stdout, a FIFO, a
    terminal) is written in place, as the program does -- a rename would
    replace the name, not write to what it names -- so there a failed call
    may have written part of the output (opening a FIFO waits for its
    reader).
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
    input that is missing, a full disk, ...), ValueError for bad arguments
    and for a gzip or zstd input (told by its first bytes: decompress it
    first), MemoryError.
    """
    paths = _paths(inputs)
    _refuse_compressed(paths)
    a = _engine_args(seed, rng, memory, header, delimiter, threads, count, tmpdir)
    out = None
    run = None
    try:
        out = _Output(output)
        run = _Run(progress)
        cpaths = [ffi.new("char[]", p) for p in paths]
        arr = ffi.new("const char *[]", cpaths) if cpaths else ffi.NULL
        err = ffi.new("rf_engine_error *")
        status = lib.py_run_shuffle(run.c, a["key"], a["kind"], arr, len(paths), out.fd,
                                    a["delim"], a["header"], a["count"], a["memory"],
                                    a["tmpdir"], a["threads"], err)
        if status != lib.RF_OK:
            run.raise_error(status, err, output)
        if run.exc is not None:
            raise run.exc
        e = out.commit()
        if e:
            raise out.error(e)
    finally:
        ffi.memmove(a["key"], b"\0" * 32, 32)
        if run is not None:
            run.close()
        if out is not None:
            out.abort()


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
    return out


def _refuse_same_file(names):
    """ValueError when two parts name one file ("a", "./a", a link to it):
    two temporaries renamed over one name would lose a part.  The riffle
    program's rule (rf_same_file_pair, riffle_io.h)."""
    cnames = [ffi.new("char[]", n) for n in names]
    arr = ffi.new("const char *[]", cnames)
    a, b = ffi.new("size_t *"), ffi.new("size_t *")
    same = lib.rf_same_file_pair(arr, len(names), a, b)
    if same < 0:
        raise MemoryError("memory exhausted")
    if same:
        raise ValueError("%r and %r are the same file"
                         % (os.fsdecode(names[a[0]]), os.fsdecode(names[b[0]])))


def _commit_parts(outs):
    """Rename the staged parts into place, in order.  A rename that fails
    (which the staging leaves unlikely: every part is written and fsynced
    by now) raises OSError after the earlier parts are in place; it and
    the later parts keep what they had, their temporaries removed."""
    for i, out in enumerate(outs):
        e = out.commit()
        if e:
            more = "; %d of %d parts were already in place" % (i, len(outs)) if i else ""
            raise out.error(e, more)


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
    list of paths; two names of one file are refused (ValueError).  Each
    part is opened as shuffle_file opens its output (the same rules for
    links and for outputs that are not regular files).  The parts are
    written to temporary files beside them, all written to the end and
    fsynced, and only then renamed into place one after another, as the
    program does: a failed or interrupted call leaves every output as it
    was and no temporary file.  Only a rename itself failing (an I/O error
    of the directory, say; every byte is on disk by then) can leave a mix:
    the parts before it are the new ones, it and those after it keep what
    they had, no temporary is left, and the OSError names the part and says
    how many were already in place.
    The other arguments are shuffle_file's.  Errors: as shuffle_file's;
    ValueError for a bad split or pattern, or counts that do not fit the
    number of records.
    """
    paths = _paths(inputs)
    _refuse_compressed(paths)
    spl, parts = _parse_split(split)
    names = _part_names(outputs, parts)
    _refuse_same_file(names)
    a = _engine_args(seed, rng, memory, header, delimiter, threads, count, tmpdir)
    outs = []
    run = None
    try:
        for name in names:
            outs.append(_Output(name))
        run = _Run(progress)
        cpaths = [ffi.new("char[]", p) for p in paths]
        arr = ffi.new("const char *[]", cpaths) if cpaths else ffi.NULL
        fds = ffi.new("int[]", [o.fd for o in outs])
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
        for out in outs:  # every part on disk before the first rename
            out.sync()
        _commit_parts(outs)
    finally:
        ffi.memmove(a["key"], b"\0" * 32, 32)
        if run is not None:
            run.close()
        for out in outs:  # a committed part has nothing left to remove
            out.abort()
