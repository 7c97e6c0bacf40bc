"""riffle.shuffle_file and riffle.split_file: byte-identical to the riffle
program in memory and external, errors raise and leave nothing behind."""
import errno
import os
import signal
import stat
import subprocess
import sys

import numpy as np
import pytest

import riffle
from conftest import child_env


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A file of 60,000 lines of varied lengths (about 1.3 MB), the last
    without its newline, and a CSV with a header."""
    d = tmp_path_factory.mktemp("data")
    big = d / "big.txt"
    big.write_bytes(b"".join(b"line %d %s\n" % (i, b"x" * (i % 23)) for i in range(60000))
                    + b"last")
    csv = d / "a.csv"
    csv.write_bytes(b"id,v\n" + b"".join(b"%d,%d\n" % (i, i * i) for i in range(5000)))
    return big, csv


def listing(d):
    return sorted(os.listdir(d))


@pytest.mark.parametrize("seed", [42, "abc"])
@pytest.mark.parametrize("memory", [None, "64K", 200_000])
def test_shuffle_file_equals_riffle(cli, data, tmp_path, seed, memory):
    big, _ = data
    out = tmp_path / "out.txt"
    phases = []
    riffle.shuffle_file(big, out, seed=seed, memory=memory,
                        progress=lambda ph, done, total: phases.append(ph))
    args = ["--seed=%s" % seed, str(big)] + (["--memory=%s" % memory] if memory else [])
    assert out.read_bytes() == cli(*args)
    umask = os.umask(0o022)
    os.umask(umask)
    assert os.stat(out).st_mode & 0o777 == 0o666 & ~umask
    if memory:  # external: scatter to bucket files, then shuffle bucket by bucket
        assert "scatter" in phases
    assert listing(tmp_path) == ["out.txt"]


def test_options_equal_riffle(cli, data, tmp_path):
    big, csv = data
    out = tmp_path / "o"
    riffle.shuffle_file([csv, big], out, seed=7, header=1, count=100, threads=1,
                        rng="xoshiro256++", memory="1M")
    assert out.read_bytes() == cli("--seed=7", "--header=1", "-n", 100, "--rng=xoshiro256++",
                                   str(csv), str(big))
    z = tmp_path / "z"
    z.write_bytes(b"a\0b\0c\0d\0e")
    riffle.shuffle_file(str(z), str(out), seed=1, delimiter=b"\0")
    assert out.read_bytes() == cli("--seed=1", "-z", str(z))


def test_output_may_be_an_input(cli, data, tmp_path):
    _, csv = data
    f = tmp_path / "f.csv"
    f.write_bytes(csv.read_bytes())
    os.chmod(f, 0o640)
    riffle.shuffle_file(f, f, seed=5, header=1)
    assert f.read_bytes() == cli("--seed=5", "--header=1", str(csv))
    assert os.stat(f).st_mode & 0o777 == 0o640


@pytest.mark.parametrize("spec,pattern", [("80%,10%,10%", "train.csv,valid.csv,test.csv"),
                                          ("3", "part-%02d.csv"),
                                          ("1000,500,*", "p%d")])
def test_split_file_equals_riffle(cli, data, tmp_path, spec, pattern):
    _, csv = data
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    mine.mkdir()
    theirs.mkdir()
    riffle.split_file(csv, str(mine / pattern) if "," not in pattern else
                      ",".join(str(mine / p) for p in pattern.split(",")),
                      spec, seed=9, header=1, memory="32K")
    cwd = os.getcwd()
    os.chdir(theirs)
    try:
        cli("--seed=9", "--header=1", "--split=" + spec, "--output-pattern=" + pattern, str(csv))
    finally:
        os.chdir(cwd)
    assert listing(mine) == listing(theirs) and len(listing(mine)) == 3
    for name in listing(theirs):
        assert (mine / name).read_bytes() == (theirs / name).read_bytes()


def test_split_file_list_of_outputs_and_bad_plans(data, tmp_path):
    _, csv = data
    outs = [tmp_path / "a", tmp_path / "b"]
    riffle.split_file(csv, outs, "50%,50%", seed=1, header=1)
    assert all(o.read_bytes().startswith(b"id,v\n") for o in outs)
    with pytest.raises(ValueError, match="100%"):
        riffle.split_file(csv, outs, "50%,40%", seed=1)
    with pytest.raises(ValueError, match="counts"):
        riffle.split_file(csv, [tmp_path / "c", tmp_path / "d"], "10,10", seed=1, header=1)
    with pytest.raises(ValueError):
        riffle.split_file(csv, outs, "3", seed=1)  # 2 names for 3 parts
    assert listing(tmp_path) == ["a", "b"]


def test_missing_input_raises_and_leaves_nothing(tmp_path):
    out = tmp_path / "out"
    out.write_bytes(b"old\n")
    with pytest.raises(OSError) as e:
        riffle.shuffle_file([tmp_path / "nope"], out, seed=1)
    assert e.value.errno == errno.ENOENT
    assert e.value.filename == str(tmp_path / "nope")
    assert "No such file" in str(e.value)
    assert out.read_bytes() == b"old\n"
    assert listing(tmp_path) == ["out"]
    with pytest.raises(OSError):
        riffle.split_file(tmp_path / "nope", [tmp_path / "x", tmp_path / "y"], "2", seed=1)
    assert listing(tmp_path) == ["out"]


def test_bad_arguments(data, tmp_path):
    big, _ = data
    for kw in [dict(memory="12Q"), dict(memory=0), dict(delimiter=b"ab"), dict(header=-1),
               dict(memory="0%")]:
        with pytest.raises(ValueError):
            riffle.shuffle_file(big, tmp_path / "o", seed=1, **kw)
    assert listing(tmp_path) == []
    assert riffle.parse_memory("64M") == 64 << 20 and riffle.parse_memory("2GB") == 2 << 30
    assert riffle.parse_memory(123) == 123 and riffle.parse_memory("5b") == 5
    assert riffle.parse_memory("8kB") == 8192 and riffle.parse_memory("1T") == 1 << 40
    assert 0 < riffle.parse_memory("25%") <= riffle.parse_memory("100%")
    for bad in ["1.5G", "-1", " 5", "5KiB", "101%", "", "0"]:
        with pytest.raises(ValueError):
            riffle.parse_memory(bad)


class Stop(Exception):
    pass


@pytest.mark.parametrize("exc", [Stop, KeyboardInterrupt])
def test_exception_in_progress_stops_and_cleans_up(data, tmp_path, exc):
    big, _ = data
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    out = tmp_path / "out"
    seen = []

    def progress(phase, done, total):
        seen.append(phase)
        if phase == "scatter":  # temporary bucket files exist by now
            raise exc()
    with pytest.raises(exc):
        riffle.shuffle_file(big, out, seed=1, memory="64K", tmpdir=tmpdir, progress=progress)
    assert "scatter" in seen
    assert listing(tmp_path) == ["tmp"] and listing(tmpdir) == []


@pytest.fixture
def small_tmpfs(tmp_path):
    """A 256 KiB tmpfs, unmounted after the test (skips where it cannot be
    mounted): a disk that fills up."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)],
                       stderr=subprocess.PIPE)
    if r.returncode != 0:
        pytest.skip("cannot mount a small tmpfs: " + r.stderr.decode().strip())
    yield mnt
    subprocess.run(["umount", str(mnt)])


def test_full_disk_raises_and_leaves_nothing(data, tmp_path, small_tmpfs):
    big, _ = data
    mnt = small_tmpfs
    with pytest.raises(OSError) as e:
        riffle.shuffle_file(big, mnt / "out", seed=1)
    assert e.value.errno == errno.ENOSPC
    assert listing(mnt) == []
    # the temporary bucket files on the full disk: external run
    with pytest.raises(OSError) as e:
        riffle.shuffle_file(big, tmp_path / "out2", seed=1, memory="64K", tmpdir=mnt)
    assert e.value.errno == errno.ENOSPC
    assert listing(mnt) == [] and "out2" not in listing(tmp_path)


def temporaries_in_use(pid, tmpdir):
    """Whether process pid has files open in tmpdir: named ones, or unnamed
    (O_TMPFILE) ones, which /proc shows as "tmpdir/#inode (deleted)"."""
    fds = "/proc/%d/fd" % pid
    links = []
    for fd in os.listdir(fds):
        try:
            links.append(os.readlink(os.path.join(fds, fd)))
        except OSError:
            pass
    return any(link.startswith(str(tmpdir) + os.sep) for link in links)


def test_sigint_during_a_run_leaves_nothing(data, tmp_path):
    """A real SIGINT while the run scatters (its bucket files open): the child reports
    the phase, then waits in short sleeps until the signal arrives.  (Not in
    one blocking read: the signal may be taken by a thread other than the
    main one -- numpy's BLAS threads do not block it -- and then only the
    interpreter's next check of its pending signals sees it.)"""
    big, _ = data
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    out = tmp_path / "out"
    code = (
        # Python leaves SIGINT ignored when it started ignored, as it is for a
        # command run in the background by a shell (a CI job may be one)
        "import signal, sys, time, riffle\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "def progress(phase, done, total):\n"
        "    if phase == 'scatter' and done > 0:\n"
        "        print('scatter', flush=True)\n"
        "        while True:\n"
        "            time.sleep(0.01)\n"
        "try:\n"
        "    riffle.shuffle_file(sys.argv[1], sys.argv[2], seed=1, memory='64K',\n"
        "                        tmpdir=sys.argv[3], progress=progress)\n"
        "except KeyboardInterrupt:\n"
        "    sys.exit(42)\n")
    env = child_env()
    p = subprocess.Popen([sys.executable, "-c", code, str(big), str(out), str(tmpdir)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, env=env)
    try:
        assert p.stdout.readline() == b"scatter\n"
        assert temporaries_in_use(p.pid, tmpdir)  # the run has its bucket files
        p.send_signal(signal.SIGINT)
        assert p.wait(timeout=120) == 42
    finally:
        p.kill()
        p.wait()
    assert listing(tmp_path) == ["tmp"] and listing(tmpdir) == []


@pytest.mark.parametrize("n", [0, 1, 10, 70_000])
@pytest.mark.parametrize("seed", [42, "abc"])
def test_keyed_order_is_the_order_of_riffle_seed(cli, tmp_path, n, seed):
    """keyed_order(n, S) is the order riffle --seed=S gives n lines (across a
    2^16-item block boundary too), and for n <= 2^20 that of -i 0-(n-1)."""
    order = riffle.keyed_order(n, seed)
    lines = tmp_path / "lines"
    lines.write_bytes(b"".join(b"%d\n" % i for i in range(n)))
    assert order.tolist() == [int(v) for v in cli("--seed=%s" % seed, str(lines)).split()]
    if n:
        assert order.tolist() == [int(v) for v in
                                  cli("--seed=%s" % seed, "-i", "0-%d" % (n - 1)).split()]
    assert sorted(order.tolist()) == list(range(n))


def test_keyed_order_puts_an_array_beside_a_shuffled_file(tmp_path):
    labels = np.arange(5000) * 3
    src = tmp_path / "text"
    src.write_bytes(b"".join(b"row %d\n" % i for i in range(5000)))
    riffle.shuffle_file(src, tmp_path / "out", seed=8, memory="16K", threads=1,
                        rng="pcg64")
    rows = [int(l.split()[1]) for l in (tmp_path / "out").read_bytes().splitlines()]
    assert (labels[riffle.keyed_order(5000, 8, rng="pcg64")] == np.array(rows) * 3).all()
    assert riffle.keyed_order(5000, 8, threads=1).tolist() == \
        riffle.keyed_order(5000, 8, threads=2).tolist()


def test_split_full_disk_raises_and_leaves_the_parts(data, small_tmpfs):
    """ENOSPC while writing the second part: the first, already written in
    full to its temporary, is not renamed; every part keeps its old bytes
    and no temporary is left on the full disk."""
    big, _ = data
    mnt = small_tmpfs
    parts = [mnt / "train", mnt / "test"]
    for i, p in enumerate(parts):
        p.write_bytes(b"old %d\n" % i)
    with pytest.raises(OSError) as e:
        riffle.split_file(big, parts, "10%,90%", seed=1)  # 130 kB, then 1.2 MB
    assert e.value.errno == errno.ENOSPC
    assert e.value.filename == str(parts[1])
    assert [p.read_bytes() for p in parts] == [b"old 0\n", b"old 1\n"]
    assert listing(mnt) == ["test", "train"]


def test_split_rename_failing_midway_says_what_is_in_place(data, tmp_path):
    """The one failure after the first rename: a rename itself failing.  A
    directory made at the second part's name while the run writes makes
    its rename fail (EISDIR); the first part is in place, the second and
    third keep what they had, no temporary is left."""
    _, csv = data
    names = [tmp_path / "a", tmp_path / "b", tmp_path / "c"]
    names[2].write_bytes(b"old c\n")

    def progress(phase, done, total):
        if not names[1].exists():
            names[1].mkdir()
    with pytest.raises(OSError) as e:
        riffle.split_file(csv, names, "3", seed=2, header=1, progress=progress)
    assert e.value.errno == errno.EISDIR and e.value.filename == str(names[1])
    assert "1 of 3 parts were already in place" in str(e.value)
    assert names[0].read_bytes().startswith(b"id,v\n") and len(names[0].read_bytes()) > 1000
    assert names[1].is_dir() and listing(names[1]) == []
    assert names[2].read_bytes() == b"old c\n"
    assert listing(tmp_path) == ["a", "b", "c"]


def test_split_refuses_two_names_of_one_file(data, tmp_path):
    _, csv = data
    a = tmp_path / "a"
    os.symlink("a", tmp_path / "link")
    for names in [[a, tmp_path / "." / "a"], [a, tmp_path / "link"],
                  [str(a) + "," + str(tmp_path / "link")]]:
        with pytest.raises(ValueError, match="same file"):
            riffle.split_file(csv, names[0] if len(names) == 1 else names, "2", seed=1)
    assert listing(tmp_path) == ["link"]


def null_device(d):
    """A null device to write to: one made in d (mknod: root), so that a
    regression replacing it harms no one, else /dev/null for a user who
    cannot replace it; None for root where no usable device can be made in
    d.  On a nodev mount (a tmp_path under a nodev /tmp) mknod succeeds but
    opening the node fails (EACCES), so the node is opened here before it
    counts."""
    dev = d / "null"
    try:
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        os.close(os.open(dev, os.O_WRONLY))
        return dev
    except OSError:
        dev.unlink(missing_ok=True)
        return None if os.geteuid() == 0 else "/dev/null"


def test_output_devices_are_written_in_place(data, tmp_path):
    """A null device is written, not replaced by a regular file (a rename
    over /dev/null would, as root); a link to it is followed and kept."""
    _, csv = data
    dev = null_device(tmp_path)
    if dev is None:
        pytest.skip("cannot make a usable null device here (mknod refused, or a nodev mount)")
    riffle.shuffle_file(csv, dev, seed=1)
    assert stat.S_ISCHR(os.stat(dev).st_mode)
    os.symlink(dev, tmp_path / "link")
    riffle.shuffle_file(csv, tmp_path / "link", seed=1)
    assert os.path.islink(tmp_path / "link") and stat.S_ISCHR(os.stat(dev).st_mode)
    riffle.split_file(csv, [tmp_path / "link", tmp_path / "part"], "2", seed=1)
    assert os.path.islink(tmp_path / "link") and stat.S_ISCHR(os.stat(dev).st_mode)
    assert sorted(set(listing(tmp_path)) - {"null"}) == ["link", "part"]


def test_output_fifo_is_written_in_place(cli, tmp_path):
    """A FIFO gets the bytes (its reader opened first, without blocking,
    and the output smaller than the pipe's buffer: no wait anywhere) and
    stays a FIFO."""
    src = tmp_path / "in"
    src.write_bytes(b"".join(b"%d\n" % i for i in range(2000)))  # 8.9 kB
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    r = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        riffle.shuffle_file(src, fifo, seed=3)
        got = b""
        while True:
            chunk = os.read(r, 1 << 16)
            if not chunk:
                break
            got += chunk
    finally:
        os.close(r)
    assert got == cli("--seed=3", str(src))
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert listing(tmp_path) == ["fifo", "in"]


def test_output_links_are_followed(cli, data, tmp_path):
    """A link's target is replaced and the link kept; a dangling link gets
    its target created -- as the program's -o."""
    _, csv = data
    target = tmp_path / "target"
    target.write_bytes(b"old\n")
    os.symlink("target", tmp_path / "link")
    riffle.shuffle_file(csv, tmp_path / "link", seed=4, header=1)
    assert os.path.islink(tmp_path / "link")
    assert target.read_bytes() == cli("--seed=4", "--header=1", str(csv))
    os.symlink("new", tmp_path / "dangling")
    riffle.shuffle_file(csv, tmp_path / "dangling", seed=4, header=1)
    assert (tmp_path / "new").read_bytes() == target.read_bytes()
    assert listing(tmp_path) == ["dangling", "link", "new", "target"]


def test_engine_errors_carry_the_library_message():
    """A failed run raises with rf_engine_error_message's sentence: for
    arguments the engine refused (RF_EINVAL, no file) a ValueError, for an
    RF_EINVAL about a file an OSError naming it.  No public call makes the
    engine refuse its arguments (the package checks them first), so the
    run's error is made here."""
    from riffle._files import _Run
    from riffle._riffle import ffi, lib
    run = _Run(None)
    try:
        err = ffi.new("rf_engine_error *")
        err.status = lib.RF_EINVAL
        err.op = lib.RF_ENGINE_OP_NONE
        with pytest.raises(ValueError) as e:
            run.raise_error(lib.RF_EINVAL, err)
        assert str(e.value) == "cannot shuffle: invalid argument"
        err.op = lib.RF_ENGINE_OP_READ
        err.err = errno.EINVAL
        err.path = b"in.txt"
        with pytest.raises(OSError) as e:
            run.raise_error(lib.RF_EINVAL, err)
        assert e.value.errno == errno.EINVAL and e.value.filename == "in.txt"
        assert e.value.strerror == "in.txt: " + os.strerror(errno.EINVAL)
        err.status = lib.RF_ENOMEM
        err.op = lib.RF_ENGINE_OP_NONE
        with pytest.raises(MemoryError, match="memory exhausted"):
            run.raise_error(lib.RF_ENOMEM, err)
    finally:
        run.close()


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_compressed_input_refused(tmp_path, suffix):
    # the package reads inputs as they are: a gzip or zstd file (told by its
    # first bytes, whatever its name) would be shuffled as compressed bytes
    plain = tmp_path / "plain.txt"
    plain.write_bytes(b"".join(b"%d\n" % i for i in range(1000)))
    packed = tmp_path / ("packed" + suffix)
    tool = ["gzip", "-c"] if suffix == ".gz" else ["zstd", "-q", "-c"]
    with open(packed, "wb") as f:
        subprocess.run(tool + [str(plain)], stdout=f, check=True)
    hidden = tmp_path / "no-extension"
    hidden.write_bytes(packed.read_bytes())
    out = tmp_path / "out.txt"
    for bad in (packed, hidden):
        with pytest.raises(ValueError, match="compressed input: decompress it first"):
            riffle.shuffle_file([plain, bad], out, seed=1)
        with pytest.raises(ValueError, match="compressed input"):
            riffle.split_file(bad, [tmp_path / "a", tmp_path / "b"], 2, seed=1)
        with pytest.raises(ValueError, match="compressed: a record file is mapped"):
            riffle.RecordFile(bad)
    assert listing(tmp_path) == sorted(["plain.txt", "packed" + suffix, "no-extension"])
