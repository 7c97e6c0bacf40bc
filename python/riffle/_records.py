"""riffle.RecordFile: random access to the records of a file, as a dataset."""
import errno
import itertools
import mmap
import operator
import os
import stat
import tempfile

import numpy as np

from ._riffle import ffi, lib

# The saved index: MAGIC, then little-endian uint64 words: the delimiter,
# the size of the stamp in bytes, the number of offsets (records + 1); then
# the stamp (rf_file_stamp as this machine lays it out, padded to 8 bytes),
# then the offsets.  It describes every record of the file, so one index
# serves any `header`.
MAGIC = b"RFRECIX1"
INDEX_SUFFIX = ".rfidx"
_HEAD_WORDS = 3
_STAMP_BYTES = (ffi.sizeof("rf_file_stamp") + 7) // 8 * 8


class RecordFile:
    """The records of a file, read in any order without loading the file.

    RecordFile(path, delimiter=b"\\n", header=0, index=False)

    A record is the bytes up to (not including) the next delimiter byte; an
    unterminated last record is a record.  header: records at the start
    that are not part of the data set (a CSV's column names): ds[0] is the
    first record after them; ds.header is a list of them.

    The file is mapped (mmap), never read whole: what is held in memory is
    8 bytes per record, the offsets, found by the library's SIMD delimiter
    scan (rf_delims_find); the records' bytes come from the page cache as
    they are asked for, so a file larger than memory can be read in any
    order -- with riffle.Permutation or riffle.DistributedSampler, in a
    global random order without a shuffled copy.

    index: False (default) finds the offsets at every open; True keeps
    them in PATH.rfidx (any other str: that file) and reads them from there
    when its stamp of the file (device, inode, size, modification and
    change times: rf_file_stamp) still matches; an index that does not
    match, or is not an index, is rebuilt and written again (atomically).

    len(ds); ds[i] -> bytes (negative i counts from the end); ds[a:b:c] and
    ds[index_array] -> a list of bytes, gathered by one library call with
    the GIL released.  A map-style dataset for torch's DataLoader; picklable
    (made again from its arguments in the worker); torch's DataLoader
    fetches a whole batch with one call (__getitems__).  As with any mapped
    file, a file rewritten while it is open gives whatever bytes it holds
    then, and one truncated under it can kill the process (SIGBUS): the
    stamp guards the saved index, not the open mapping.  close() (or a
    with block) unmaps it.  A gzip or zstd file (told by its first bytes)
    is refused with ValueError: its records would be compressed bytes.
    """

    def __init__(self, path, delimiter=b"\n", header=0, index=False):
        self._args = (path, delimiter, header, index)
        self._map = None
        self._data = None
        self.path = os.fspath(path)
        self.delimiter = _delimiter_byte(delimiter)
        header = operator.index(header)
        if header < 0:
            raise ValueError("header must be >= 0")
        if index is True:
            index = self.path + INDEX_SUFFIX
        elif index is not False:
            index = os.fspath(index)
        self.index_path = index or None
        fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            stamp = ffi.new("rf_file_stamp *")
            err = lib.rf_file_stamp_fd(fd, stamp)
            if err:
                raise OSError(err, os.strerror(err), self.path)
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), self.path)
            if not stat.S_ISREG(st.st_mode):
                raise OSError(errno.EINVAL, "not a regular file (a record file is mapped)",
                              self.path)
            size = st.st_size
            if size:
                self._map = mmap.mmap(fd, size, mmap.MAP_PRIVATE, mmap.PROT_READ)
                self._refuse_compressed()
        finally:
            os.close(fd)
        self._size = size
        self._data = ffi.from_buffer("unsigned char[]", self._map) if size else ffi.NULL
        offs = self._load_index(stamp) if self.index_path else None
        if offs is None:
            offs = self._scan()
            if self.index_path:
                self._save_index(stamp, offs)
        total = len(offs) - 1
        self._header_count = min(header, total)
        self._offs = offs
        self._first = self._header_count
        self._n = total - self._first

    # ---- the offsets ----

    def _scan(self):
        if not self._size:
            return np.zeros(1, dtype=np.uint64)
        count = lib.rf_delims_count(self._data, self._size, self.delimiter)
        offs = np.empty(count + 2, dtype=np.uint64)
        n = lib.py_records_scan(self._data, self._size, self.delimiter,
                                ffi.from_buffer("uint64_t[]", offs))
        return offs[:n + 1]

    def _load_index(self, stamp):
        """The offsets saved in self.index_path if it is an index of this
        file as it is now, else None."""
        try:
            with open(self.index_path, "rb") as f:
                head = f.read(len(MAGIC) + 8 * _HEAD_WORDS + _STAMP_BYTES)
                if len(head) < len(MAGIC) + 8 * _HEAD_WORDS + _STAMP_BYTES or \
                        not head.startswith(MAGIC):
                    return None
                delim, stamp_bytes, count = np.frombuffer(
                    head, dtype="<u8", count=_HEAD_WORDS, offset=len(MAGIC)).tolist()
                if delim != self.delimiter or stamp_bytes != _STAMP_BYTES or count < 1:
                    return None
                # the size the header announces, before anything is allocated
                if os.fstat(f.fileno()).st_size != len(head) + 8 * count:
                    return None
                saved = ffi.new("rf_file_stamp *")
                at = len(MAGIC) + 8 * _HEAD_WORDS
                ffi.memmove(saved, head[at:at + ffi.sizeof("rf_file_stamp")],
                            ffi.sizeof("rf_file_stamp"))
                if not lib.py_stamp_same(saved, stamp):
                    return None
                offs = np.fromfile(f, dtype="<u8", count=count)
        except FileNotFoundError:
            return None
        if len(offs) != count or not _valid_offsets(offs, self._size):
            return None
        return offs.astype(np.uint64, copy=False)

    def _save_index(self, stamp, offs):
        head = np.array([self.delimiter, _STAMP_BYTES, len(offs)], dtype="<u8").tobytes()
        stamp_bytes = bytes(ffi.buffer(stamp)).ljust(_STAMP_BYTES, b"\0")
        where = os.path.dirname(os.path.abspath(self.index_path))
        fd, tmp = tempfile.mkstemp(prefix=".riffle-index-", dir=where)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(MAGIC + head + stamp_bytes)
                offs.astype("<u8", copy=False).tofile(f)
            os.replace(tmp, self.index_path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    # ---- the data set ----

    def __len__(self):
        return self._n

    def _refuse_compressed(self):
        """A gzip or zstd file's records would be its compressed bytes."""
        head = self._map[:4]
        c = lib.rf_compression_sniff(head, len(head), ffi.NULL)
        if c != lib.RF_COMPRESSION_NONE:
            name = ffi.string(lib.rf_compression_name(c)).decode()
            self._map.close()
            self._map = None
            raise ValueError("%s: %s-compressed: a record file is mapped as it is; "
                             "decompress it first" % (self.path, name))

    @property
    def header(self):
        """The header records (a list of bytes)."""
        return [self._record(j) for j in range(self._header_count)]

    @property
    def offsets(self):
        """Where each record starts in the file (uint64 array of len(ds)):
        a read-only view."""
        v = self._offs[self._first:self._first + self._n]
        v = v.view()
        v.flags.writeable = False
        return v

    def _record(self, j):
        """Record j of the file, counting the header's."""
        self._check_open()
        start, end = int(self._offs[j]), int(self._offs[j + 1]) - 1
        return self._map[start:end] if end > start else b""

    def __getitem__(self, i):
        """ds[i] -> bytes; ds[a:b:c] or ds[index_array] -> list of bytes."""
        if isinstance(i, slice):
            return self._gather(np.arange(*i.indices(self._n), dtype=np.int64))
        if isinstance(i, (int, np.integer)):
            i = operator.index(i)
            if i < 0:
                i += self._n
            if not 0 <= i < self._n:
                raise IndexError("record index out of range")
            return self._record(self._first + i)
        if np.ndim(i) == 0:
            return self[operator.index(i)]  # a 0-d integer array, else TypeError
        return self._gather(i)

    def _gather(self, idx):
        a = np.asarray(idx)
        if a.dtype == bool:
            raise IndexError("boolean masks are not record indices")
        if a.dtype.kind not in "iu":
            if a.size:
                raise IndexError("record indices must be integers")
            a = a.astype(np.int64)
        if a.ndim != 1:
            a = a.reshape(-1)
        if a.size == 0:
            return []
        self._check_open()
        if a.dtype.kind == "u":
            if int(a.max()) >= self._n:
                raise IndexError("record index out of range")
            a = a.astype(np.uint64)
        else:
            a = a.astype(np.int64)
            if int(a.min()) < -self._n or int(a.max()) >= self._n:
                raise IndexError("record index out of range")
            a = np.where(a < 0, a + self._n, a).view(np.uint64)
        if self._first:
            a = a + np.uint64(self._first)
        a = np.ascontiguousarray(a, dtype=np.uint64)
        k = a.size
        ends = np.empty(k, dtype=np.uint64)
        pa = ffi.from_buffer("uint64_t[]", a)
        po = ffi.from_buffer("uint64_t[]", self._offs)
        total = lib.py_records_gather(self._data, po, pa, k,
                                      ffi.from_buffer("uint64_t[]", ends), ffi.NULL)
        buf = np.empty(total, dtype=np.uint8)
        if total:
            lib.py_records_gather(self._data, po, pa, k, ffi.NULL,
                                  ffi.from_buffer("unsigned char[]", buf))
        blob = buf.tobytes()
        del buf
        # one slice of the gathered bytes per record, without a Python loop
        stops = ends.tolist()
        return list(map(blob.__getitem__, map(slice, itertools.chain((0,), stops), stops)))

    def __getitems__(self, indices):
        """The records of a batch of indices, one call (torch's DataLoader
        asks a map-style dataset for a batch this way when it can)."""
        return self._gather(indices)

    # ---- life ----

    def _check_open(self):
        if self._size and self._map is None:
            raise ValueError("I/O operation on a closed RecordFile")

    def close(self):
        """Unmap the file; the data set cannot be read afterwards."""
        if self._map is not None:
            ffi.release(self._data)
            self._data = ffi.NULL
            self._map.close()
            self._map = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __reduce__(self):
        return (RecordFile, self._args)

    def __repr__(self):
        return "riffle.RecordFile(%r, delimiter=%r, records=%d)" % (
            self.path, bytes([self.delimiter]), self._n)


def _delimiter_byte(delimiter):
    """The delimiter as an int 0..255 from a bytes object of length 1."""
    if isinstance(delimiter, str):
        raise TypeError("delimiter must be bytes of length 1, e.g. b\"\\n\", not str")
    if not isinstance(delimiter, (bytes, bytearray)) or len(delimiter) != 1:
        raise ValueError("delimiter must be bytes of length 1, e.g. b\"\\n\" or b\"\\0\"")
    return delimiter[0]


def _valid_offsets(offs, size):
    """Offsets that keep every record inside the file: offs[0] = 0,
    strictly increasing, each record's end (offs[j+1] - 1) within size."""
    if offs[0] != 0:
        return False
    if len(offs) == 1:
        return size == 0
    if int(offs[-1]) not in (size, size + 1):
        return False
    return bool((np.diff(offs.astype(np.int64)) > 0).all())
