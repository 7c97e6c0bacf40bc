"""riffle.RecordFile against a reference: the file's bytes split on the
delimiter in Python."""
import os
import pickle
import subprocess
import sys
import textwrap
import zlib

import numpy as np
import pytest

import riffle
from conftest import child_env


def reference(data, delim=b"\n"):
    """The records of data: split on delim, the empty piece after a final
    delimiter (or of empty data) not a record."""
    parts = data.split(delim)
    if parts and parts[-1] == b"":
        parts.pop()
    return parts


def random_records(seed, n, delim=b"\n", terminated=True, maxlen=40):
    """n records of random bytes other than delim (empty ones among them)."""
    rng = np.random.default_rng(seed)
    recs = []
    for _ in range(n):
        r = bytes(rng.integers(0, 256, int(rng.integers(0, maxlen))).astype(np.uint8))
        recs.append(r.replace(delim, b"x"))
    data = delim.join(recs) + (delim if terminated else b"")
    return data, recs


def write(tmp_path, data, name="data.txt"):
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


@pytest.mark.parametrize("delim", [b"\n", b"\0", b","])
@pytest.mark.parametrize("terminated", [True, False])
def test_matches_the_reference(tmp_path, delim, terminated):
    data, recs = random_records(7, 3000, delim, terminated)
    path = write(tmp_path, data)
    ds = riffle.RecordFile(path, delimiter=delim)
    want = reference(data, delim)
    assert len(ds) == len(want)
    assert [ds[i] for i in range(len(ds))] == want
    assert ds[-1] == want[-1] and ds[-len(ds)] == want[0]
    idx = np.random.default_rng(1).integers(0, len(ds), 5000)
    assert ds[idx] == [want[i] for i in idx]
    assert ds[idx.astype(np.uint32)] == [want[i] for i in idx]
    assert ds[idx.tolist()] == [want[i] for i in idx]
    assert ds[10:200:7] == want[10:200:7]
    assert ds[::-1] == want[::-1]
    assert ds[np.array([-1, -2, 0])] == [want[-1], want[-2], want[0]]
    assert ds.__getitems__([3, 1]) == [want[3], want[1]]
    starts = np.cumsum([0] + [len(r) + 1 for r in want[:-1]])
    assert ds.offsets.tolist() == starts.tolist()


def test_unterminated_last_record(tmp_path):
    ds = riffle.RecordFile(write(tmp_path, b"a\nbb\nccc"))
    assert len(ds) == 3
    assert ds[2] == b"ccc"
    assert ds[np.array([2, 0])] == [b"ccc", b"a"]


def test_empty_records_and_delimiter_only(tmp_path):
    ds = riffle.RecordFile(write(tmp_path, b"\n\n\nx\n\n"))
    assert ds[:] == [b"", b"", b"", b"x", b""]
    assert ds[np.array([0, 1])] == [b"", b""]


def test_header(tmp_path):
    path = write(tmp_path, b"name,age\nann,3\nbob,4\n")
    ds = riffle.RecordFile(path, header=1)
    assert len(ds) == 2
    assert ds.header == [b"name,age"]
    assert ds[0] == b"ann,3" and ds[-1] == b"bob,4"
    assert ds[np.array([1, 0])] == [b"bob,4", b"ann,3"]
    assert ds.offsets.tolist() == [9, 15]
    # a header longer than the file: every record is header, none is data
    short = riffle.RecordFile(path, header=5)
    assert len(short) == 0 and short.header == [b"name,age", b"ann,3", b"bob,4"]


def test_empty_file(tmp_path):
    for header in (0, 1):
        ds = riffle.RecordFile(write(tmp_path, b""), header=header)
        assert len(ds) == 0 and ds.header == []
        assert ds[np.array([], dtype=np.int64)] == [] and ds[:] == []
        with pytest.raises(IndexError):
            ds[0]
        with pytest.raises(IndexError):
            ds[np.array([0])]


def test_index_errors(tmp_path):
    ds = riffle.RecordFile(write(tmp_path, b"a\nb\nc\n"))
    for bad in (3, -4, 2**70, np.int64(3)):
        with pytest.raises(IndexError, match="out of range"):
            ds[bad]
    for bad in ([0, 3], [-4], np.array([1, 2**63], dtype=np.uint64), [2**62]):
        with pytest.raises(IndexError, match="out of range"):
            ds[np.array(bad)]
    with pytest.raises(IndexError, match="boolean"):
        ds[np.array([True, False, True])]
    with pytest.raises(IndexError, match="integers"):
        ds[np.array([0.5])]
    with pytest.raises(TypeError):
        ds[1.0]


def test_argument_errors(tmp_path):
    path = write(tmp_path, b"a\n")
    with pytest.raises(ValueError, match="length 1"):
        riffle.RecordFile(path, delimiter=b"\r\n")
    with pytest.raises(TypeError, match="not str"):
        riffle.RecordFile(path, delimiter="\n")
    with pytest.raises(ValueError, match="header"):
        riffle.RecordFile(path, header=-1)
    with pytest.raises(FileNotFoundError):
        riffle.RecordFile(str(tmp_path / "missing"))
    with pytest.raises(IsADirectoryError):
        riffle.RecordFile(str(tmp_path))
    with pytest.raises(OSError, match="not a regular file"):
        riffle.RecordFile("/dev/null")


def test_close(tmp_path):
    with riffle.RecordFile(write(tmp_path, b"a\nb\n")) as ds:
        assert ds[1] == b"b"
    with pytest.raises(ValueError, match="closed"):
        ds[0]
    with pytest.raises(ValueError, match="closed"):
        ds[np.array([0])]


def test_pickle_reopens_the_file(tmp_path):
    data, _ = random_records(3, 500)
    ds = riffle.RecordFile(write(tmp_path, data), header=2)
    copy = pickle.loads(pickle.dumps(ds))
    assert len(copy) == len(ds) and copy[:] == ds[:] and copy.header == ds.header


def test_with_permutation_and_sampler(tmp_path):
    data, _ = random_records(5, 2000)
    want = reference(data)
    ds = riffle.RecordFile(write(tmp_path, data))
    p = riffle.Permutation(len(ds), seed=11)
    order = p[0:len(ds)]
    assert ds[order] == [want[i] for i in order]
    seen = []
    for rank in range(3):
        s = riffle.DistributedSampler(ds, num_replicas=3, rank=rank, seed=4, drop_last=True)
        idx = list(s)
        assert ds[np.array(idx)] == [want[i] for i in idx]
        seen += idx
    assert len(seen) == len(set(seen)) == len(want) // 3 * 3


# ---- the saved index ----

def index_file(path):
    return path + ".rfidx"


def test_index_saved_and_used(tmp_path):
    data, _ = random_records(9, 1000)
    path = write(tmp_path, data)
    ds = riffle.RecordFile(path, index=True)
    assert os.path.isfile(index_file(path))
    saved = open(index_file(path), "rb").read()
    assert len(saved) >= 8 * (len(ds) + 1)
    again = riffle.RecordFile(path, index=True, header=3)
    assert again[:] == reference(data)[3:]
    # used, not rewritten: same bytes, same inode
    ino = os.stat(index_file(path)).st_ino
    riffle.RecordFile(path, index=True)
    assert os.stat(index_file(path)).st_ino == ino
    assert open(index_file(path), "rb").read() == saved
    # no stray temporary files beside it
    assert sorted(os.listdir(tmp_path)) == ["data.txt", "data.txt.rfidx"]


def test_index_of_another_name(tmp_path):
    path = write(tmp_path, b"a\nb\n")
    other = str(tmp_path / "sub.idx")
    ds = riffle.RecordFile(path, index=other)
    assert os.path.isfile(other) and not os.path.exists(index_file(path))
    assert riffle.RecordFile(path, index=other)[:] == [b"a", b"b"] == ds[:]


def test_index_of_a_changed_file_is_rebuilt(tmp_path):
    path = write(tmp_path, b"a\nb\n")
    riffle.RecordFile(path, index=True)
    before = open(index_file(path), "rb").read()
    with open(path, "ab") as f:
        f.write(b"c\n")
    ds = riffle.RecordFile(path, index=True)
    assert ds[:] == [b"a", b"b", b"c"]
    assert open(index_file(path), "rb").read() != before
    # the same size and bytes but a new modification time: rebuilt too
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    stale = open(index_file(path), "rb").read()
    assert riffle.RecordFile(path, index=True)[:] == [b"a", b"b", b"c"]
    assert open(index_file(path), "rb").read() != stale
    # a different file under the name (new inode) at the same size
    os.replace(write(tmp_path, b"x\ny\nz\n", "new.txt"), path)
    assert riffle.RecordFile(path, index=True)[:] == [b"x", b"y", b"z"]


def test_index_of_another_delimiter_is_rebuilt(tmp_path):
    path = write(tmp_path, b"a,b\nc\n")
    riffle.RecordFile(path, index=True)
    assert riffle.RecordFile(path, delimiter=b",", index=True)[:] == [b"a", b"b\nc\n"]
    assert riffle.RecordFile(path, index=True)[:] == [b"a,b", b"c"]


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "offsets_past_end",
                                    "offsets_not_increasing", "huge_count"])
def test_bad_index_is_rebuilt(tmp_path, damage):
    data, _ = random_records(2, 300)
    path = write(tmp_path, data)
    riffle.RecordFile(path, index=True)
    raw = bytearray(open(index_file(path), "rb").read())
    count = (len(raw) - 8 * 3 - len(riffle._records.MAGIC) -
             riffle._records._STAMP_BYTES) // 8
    offs_at = len(raw) - 8 * count
    if damage == "garbage":
        raw = bytearray(b"not an index at all" * 10)
    elif damage == "truncated":
        raw = raw[:-8]
    elif damage == "empty":
        raw = bytearray()
    elif damage == "offsets_past_end":
        raw[offs_at + 8 * 5:offs_at + 8 * 6] = (len(data) * 4).to_bytes(8, "little")
    elif damage == "huge_count":
        at = len(riffle._records.MAGIC) + 16
        raw[at:at + 8] = (2**60).to_bytes(8, "little")
    else:
        raw[offs_at + 8 * 5:offs_at + 8 * 6] = raw[offs_at + 8 * 3:offs_at + 8 * 4]
    st = os.stat(index_file(path))
    with open(index_file(path), "wb") as f:
        f.write(raw)
    ds = riffle.RecordFile(path, index=True)
    assert ds[:] == reference(data)
    assert ds[np.arange(len(ds))] == reference(data)
    # and written again, whole
    fixed = open(index_file(path), "rb").read()
    assert len(fixed) == st.st_size and fixed != bytes(raw)


def test_unwritable_index_is_an_error(tmp_path):
    path = write(tmp_path, b"a\n")
    with pytest.raises(OSError):
        riffle.RecordFile(path, index=str(tmp_path / "no" / "such" / "dir.idx"))


# ---- a file larger than the memory it may use ----

CHILD = textwrap.dedent("""
    import resource, sys, zlib
    import numpy as np
    import riffle
    path, budget = sys.argv[1], int(sys.argv[2])
    ds = riffle.RecordFile(path)
    p = riffle.Permutation(len(ds), seed=3, threads=1)
    status = open("/proc/self/status").read().split("\\n")
    vmdata = int([l for l in status if l.startswith("VmData")][0].split()[1]) * 1024
    resource.setrlimit(resource.RLIMIT_DATA,
                       (vmdata + budget, resource.getrlimit(resource.RLIMIT_DATA)[1]))
    try:
        whole = open(path, "rb").read()
        print("read whole", len(whole))
    except MemoryError:
        print("the file does not fit")
    crcs = np.empty(len(ds), dtype=np.uint32)
    for a in range(0, len(ds), 8192):
        for j, r in enumerate(ds[p[a:a + 8192]]):
            crcs[a + j] = zlib.crc32(r)
    print("crc", zlib.crc32(crcs.tobytes()))
""")


def test_file_larger_than_the_memory_budget(tmp_path):
    rng = np.random.default_rng(8)
    size = 48 << 20
    data = rng.integers(ord("a"), ord("z") + 1, size, dtype=np.uint8)
    data[rng.integers(0, size, size // 64)] = ord("\n")
    data = data.tobytes()
    path = write(tmp_path, data)
    want = reference(data)
    order = riffle.Permutation(len(want), seed=3)[0:len(want)]
    crcs = np.array([zlib.crc32(want[i]) for i in order], dtype=np.uint32)
    budget = 24 << 20  # the offsets (8 bytes a record, about 6 MB) fit; the file does not
    env = child_env()
    out = subprocess.run([sys.executable, "-c", CHILD, path, str(budget)], cwd=str(tmp_path),
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split("\n")
    assert lines[0] == "the file does not fit"
    assert lines[1] == "crc %d" % zlib.crc32(crcs.tobytes())



def test_in_a_torch_dataloader_with_workers(tmp_path):
    torch_data = pytest.importorskip("torch.utils.data", reason="torch is not installed")
    data, _ = random_records(12, 1500)
    want = reference(data)
    ds = riffle.RecordFile(write(tmp_path, data), index=True)
    sampler = riffle.DistributedSampler(ds, num_replicas=1, rank=0, seed=9)
    loader = torch_data.DataLoader(ds, batch_size=64, sampler=sampler, num_workers=2,
                                   collate_fn=list)
    got = [r for batch in loader for r in batch]
    assert got == [want[i] for i in sampler]
