#!/usr/bin/python3
"""bench_python.py -- the Python package against what Python users run now,
side by side in one run.

Usage: PYTHONPATH=python /usr/bin/python3 bench/bench_python.py [options]
  --n-big N       the large array size (default 10**8; 10**7 on a loaded machine)
  --file-size B   bytes of the shuffle_file input (default 10**9, the bench_cli.sh
                  BIG file; generated with bench_lib.sh's bench_gen)
  --reps R        runs per figure, the median is reported (default 3)
  --build DIR     the build whose riffle program is timed (default build)
  --shuffle-only  only the array shuffles (float64 at --n-big: a short run)
  --records-size B  bytes of the RecordFile input (default 10**9, bench_gen)
  --only WHAT     one part: shuffle, perm, threads, sampler, file, records

Prints, for each contender, the median wall time and the ratio against
riffle: Generator.shuffle of float64 and int64 arrays vs
numpy.random.default_rng().shuffle and torch.randperm + indexing (when torch
is importable); Permutation(10**9) per million indices (the library's range
kernel directly, a consecutive index array, a random index array) and its
memory vs np.random.permutation(10**9) projected from 10**7; the
DistributedSampler's memory at n = 10**9; shuffle_file vs the riffle
program on the same file; Permutation(10**9) slices on 1 and 2 threads
(M indices/s, wall and CPU) vs numpy's and torch's permutation; RecordFile's
index (GB/s) vs numpy and a Python loop over the lines, and 10**5 random
records by one index array (M records/s) vs a Python list of offsets over
the same mapping and seek + readline.  A benchmark, not a test: no figure
fails.
"""
import argparse
import gc
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc

import numpy as np

import riffle

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def median_time(fn, reps, setup=None):
    """Median wall time of reps calls of fn, after one untimed call (page
    faults of fresh result arrays, caches)."""
    fn(setup() if setup else None)
    times = []
    for _ in range(reps):
        arg = setup() if setup else None
        gc.collect()
        t = time.perf_counter()
        fn(arg)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def median_cpu(fn, reps):
    """Median CPU time of this process for reps calls of fn (after one
    untimed call): steadier than wall time on a machine others load."""
    fn()
    times = []
    for _ in range(reps):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return statistics.median(times)


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def header():
    model = subprocess.run(["sh", "-c", "lscpu | sed -n 's/^Model name: *//p'"],
                           capture_output=True, text=True).stdout.strip()
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    print("machine: %d CPUs, %s; numpy %s; riffle %s" % (os.cpu_count(), model,
                                                        np.__version__, riffle.__version__))
    print("date: %s; load average before: %s" % (time.strftime("%Y-%m-%d %H:%M UTC",
                                                                time.gmtime()), load))


def bench_shuffle(n, dtype, reps, torch):
    base = np.arange(n).astype(dtype)
    copy = lambda: base.copy()  # noqa: E731
    g = riffle.Generator(1)
    rg = np.random.default_rng(1)
    t_r = median_time(lambda a: g.shuffle(a), reps, copy)
    t_r1 = median_time(lambda a: riffle.Generator(1, threads=1).shuffle(a), reps, copy)
    t_np = median_time(lambda a: rg.shuffle(a), reps, copy)
    row = [("riffle Generator.shuffle", t_r), ("riffle, threads=1", t_r1),
           ("numpy default_rng().shuffle", t_np)]
    if torch is not None:
        tb = torch.from_numpy(base)
        row.append(("torch.randperm + index", median_time(
            lambda _: tb[torch.randperm(n)], reps)))
    print("\n%s, n = %d:" % (np.dtype(dtype).name, n))
    for name, t in row:
        print("  %-30s %9.3f s  %6.2f ns/elem  %5.2fx riffle" % (name, t, t / n * 1e9, t / t_r))


def traced(fn):
    """(peak bytes of Python allocations, RSS growth in KiB) while fn runs.
    Timings are taken apart: tracing slows every allocation."""
    gc.collect()
    rss0 = rss_kib()
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak, rss_kib() - rss0


def bench_perm_c(build, reps):
    """bench_perm's rf_perm_at_range at N = 10^9 (siphash), ns per index, or
    None when bench_perm is not built (make bench)."""
    prog = os.path.join(build, "bench", "bench_perm")
    if not os.access(prog, os.X_OK):
        return None
    out = subprocess.run([prog, "--count", "4000000", "--reps", str(reps)],
                         capture_output=True, text=True).stdout
    m = re.search(r"N = 10\^9\s+siphash\s+[\d.]+ \(\s*[\d.]+\)\s+([\d.]+)", out)
    return float(m.group(1)) if m else None


def bench_permutation(reps, build, torch):
    n = 10**9
    count = 1 << 22
    first = n // 3
    holder = {}
    peak, rss = traced(lambda: holder.update(p=riffle.Permutation(n, seed=1),
                                             v=None))
    p = holder["p"]
    t_range = median_time(lambda _: p[first:first + count], reps)
    idx = np.arange(first, first + count, dtype=np.int64)
    t_arr = median_time(lambda _: p[idx], reps)
    rnd = np.random.default_rng(2).integers(0, n, size=count // 4)
    t_rnd = median_time(lambda _: p[rnd], reps)
    t_iter = median_time(lambda _: sum(1 for _ in zip(range(1 << 20), p)), reps)
    it_peak, _ = traced(lambda: sum(1 for _ in zip(range(1 << 20), p)))
    t_np7 = median_time(lambda _: np.random.default_rng(3).permutation(10**7), reps)
    print("\nPermutation(10**9), ns per index (median of %d):" % reps)
    print("  p[a:b], 2^22 consecutive (range kernel)  %6.2f" % (t_range / count * 1e9))
    print("  p[index array], 2^22 consecutive         %6.2f  (%.2fx the kernel)"
          % (t_arr / count * 1e9, t_arr / t_range))
    # The kernel as bench_perm drives it (4096 consecutive indices a call,
    # one output buffer), and the index-array path, in CPU time of this
    # process: the like-for-like ratio.
    from riffle._riffle import ffi, lib
    out = np.empty(4096, dtype=np.uint64)
    buf = ffi.from_buffer("uint64_t[]", out)

    def kernel():
        for f in range(first, first + count, 4096):
            lib.rf_perm_at_range(p._p, f, 4096, buf)
    c_kernel = median_cpu(kernel, reps)
    c_arr = median_cpu(lambda: p[idx], reps)
    print("  CPU time: rf_perm_at_range by 4096 %6.2f, p[index array] %6.2f  (%.2fx)"
          % (c_kernel / count * 1e9, c_arr / count * 1e9, c_arr / c_kernel))
    c = bench_perm_c(build, reps)
    if c:
        print("  bench_perm's rf_perm_at_range (C, same run) %6.2f  -> index array / C: %.2fx"
              % (c, t_arr / count * 1e9 / c))
    else:
        print("  (bench_perm not built: make bench, for the C figure)")
    print("  p[index array], 2^20 random              %6.2f" % (t_rnd / (count // 4) * 1e9))
    print("  iter(p), 2^20 Python ints                %6.2f" % (t_iter / (1 << 20) * 1e9))
    print("  memory: Permutation(10**9) itself: Python allocations %d bytes, RSS %+d KiB;"
          " iterating 2^20 indices: peak %.0f KiB" % (peak, rss, it_peak / 1024))
    print("  np.random.default_rng().permutation(10**7): %.3f s -> 10**9 projected >= %.0f s"
          " and 8 GB (the int64 result alone)" % (t_np7, t_np7 * 100))
    if torch is not None:
        t_t7 = median_time(lambda _: torch.randperm(10**7), reps)
        print("  torch.randperm(10**7): %.3f s -> 10**9 projected >= %.0f s and 8 GB"
              " (the int64 result alone), on every rank that draws it" % (t_t7, t_t7 * 100))


def bench_sampler(reps):
    n = 10**9

    def take():
        s = riffle.DistributedSampler(n, num_replicas=8, rank=3, seed=0)
        s.set_epoch(1)
        k = 0
        for _ in s:
            k += 1
            if k == 1 << 20:
                break
    t = median_time(lambda _: take(), reps)
    peak, rss = traced(take)
    print("\nDistributedSampler(10**9, 8 replicas), 2^20 indices of rank 3: %.0f ns per"
          " index; Python allocations peak %.1f KiB, RSS %+d KiB (torch's randperm: 8 GB"
          " per rank)" % (t / (1 << 20) * 1e9, peak / 1024, rss))


def bench_file(size, build, reps):
    tmp = os.environ.get("TMPDIR", "/tmp")
    src = os.path.join(tmp, "riffle-bench-py-%d.txt" % size)
    subprocess.run(["sh", "-c", '. "$0"/bench/bench_lib.sh && bench_gen "$1" "$2"', TOP,
                    str(size), src], check=True)
    prog = os.path.join(build, "riffle")
    with tempfile.TemporaryDirectory(dir=tmp) as d:
        a, b = os.path.join(d, "py"), os.path.join(d, "cli")
        t_py = median_time(lambda _: riffle.shuffle_file(src, a, seed=1), reps)
        t_cli = median_time(lambda _: subprocess.run([prog, "--seed=1", src, "-o", b],
                                                     check=True), reps)
        same = subprocess.run(["cmp", "-s", a, b]).returncode == 0
    print("\nshuffle_file, %d MB file (bench_gen), output to a file in %s:" % (size // 10**6,
                                                                           tmp))
    print("  riffle.shuffle_file   %7.2f s" % t_py)
    print("  riffle --seed=1 -o    %7.2f s   (%.2fx shuffle_file); outputs identical: %s"
          % (t_cli, t_cli / t_py, same))


def bench_perm_threads(reps, torch):
    """Permutation(10**9) slices of 2^24 consecutive indices (rf_perm_at_range
    split across threads in C, the GIL released) on 1 and 2 threads."""
    n, count = 10**9, 1 << 24
    first = n // 3
    print("\nPermutation(10**9) p[a:a + 2^24], median of %d:" % reps)
    for th in (1, 2):
        p = riffle.Permutation(n, seed=1, threads=th)
        t = median_time(lambda _: p[first:first + count], reps)
        c = median_cpu(lambda: p[first:first + count], reps)
        print("  threads=%d  %6.1f M indices/s wall; CPU %5.2f ns per index -> %6.1f M/s on"
              " %d idle core(s)" % (th, count / t / 1e6, c / count * 1e9,
                                   th * count / c / 1e6, th))
    m = 10**7
    t_np = median_time(lambda _: np.random.default_rng(3).permutation(m), reps)
    print("  numpy default_rng().permutation(10**7)  %6.1f M indices/s (and 8 bytes each, held)"
          % (m / t_np / 1e6))
    if torch is not None:
        t_t = median_time(lambda _: torch.randperm(m), reps)
        print("  torch.randperm(10**7)                    %6.1f M indices/s (and 8 bytes each,"
              " held)" % (m / t_t / 1e6))


def warm(path):
    """Read path once, so that its pages are in the page cache."""
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


def python_offsets(path):
    """The offsets a Python user builds: one int per line, in a list."""
    offs = [0]
    with open(path, "rb") as f:
        for line in f:
            offs.append(offs[-1] + len(line))
    return offs


def bench_records(size, reps):
    import mmap
    tmp = os.environ.get("TMPDIR", "/tmp")
    src = os.path.join(tmp, "riffle-bench-py-%d.txt" % size)
    subprocess.run(["sh", "-c", '. "$0"/bench/bench_lib.sh && bench_gen "$1" "$2"', TOP,
                    str(size), src], check=True)
    size = os.path.getsize(src)
    warm(src)
    t_ix = median_time(lambda _: riffle.RecordFile(src).close(), reps)
    c_ix = median_cpu(lambda: riffle.RecordFile(src).close(), reps)
    with open(src, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    a = np.frombuffer(mm, dtype=np.uint8)
    t_np = median_time(lambda _: np.flatnonzero(a == 10), reps)
    t_py = median_time(lambda _: python_offsets(src), 1)
    ds = riffle.RecordFile(src)
    print("\nRecordFile, %d MB file (bench_gen, %d lines), from the page cache, median of %d:"
          % (size // 10**6, len(ds), reps))
    print("  index: RecordFile(path)               %6.2f GB/s  (CPU %.2f GB/s)"
          % (size / t_ix / 1e9, size / c_ix / 1e9))
    print("  numpy: flatnonzero(frombuffer == 10)  %6.2f GB/s  (%.1fx RecordFile's time)"
          % (size / t_np / 1e9, t_np / t_ix))
    print("  Python: list of offsets, for line in f %5.2f GB/s  (%.1fx; one run)"
          % (size / t_py / 1e9, t_py / t_ix))
    k = 10**5
    idx = np.random.default_rng(4).integers(0, len(ds), k)
    t_g = median_time(lambda _: ds[idx], reps)
    offs = ds.offsets.tolist() + [size + 1 if mm[size - 1] != 10 else size]
    il = idx.tolist()
    t_l = median_time(lambda _: [mm[offs[i]:offs[i + 1] - 1] for i in il], reps)

    def seek_readline():
        with open(src, "rb") as f:
            return [(f.seek(offs[i]), f.readline())[1] for i in il]
    t_s = median_time(lambda _: seek_readline(), reps)
    assert ds[idx] == [mm[offs[i]:offs[i + 1] - 1] for i in il]
    print("  ds[array of 10^5 random indices]       %6.2f M records/s" % (k / t_g / 1e6))
    print("  list of offsets + mmap slices          %6.2f M records/s  (%.1fx ds[array]'s time)"
          % (k / t_l / 1e6, t_l / t_g))
    print("  list of offsets + seek + readline      %6.2f M records/s  (%.1fx)"
          % (k / t_s / 1e6, t_s / t_g))
    ds.close()
    del a
    mm.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n-big", type=int, default=10**8)
    ap.add_argument("--file-size", type=int, default=10**9)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--build", default=os.path.join(TOP, "build"))
    ap.add_argument("--shuffle-only", action="store_true")
    ap.add_argument("--records-size", type=int, default=10**9)
    ap.add_argument("--only", choices=["shuffle", "perm", "threads", "sampler", "file",
                                       "records"])
    o = ap.parse_args()
    try:
        import torch
    except ImportError:
        torch = None
    header()
    print("command: %s" % " ".join(sys.argv))
    if o.shuffle_only:
        bench_shuffle(o.n_big, np.float64, o.reps, torch)
        return
    def part(name):
        return o.only in (None, name)
    if part("shuffle"):
        for n in (10**6, o.n_big):
            for dtype in (np.float64, np.int64):
                bench_shuffle(n, dtype, o.reps, torch)
    if part("perm"):
        bench_permutation(o.reps, o.build, torch)
    if part("threads"):
        bench_perm_threads(o.reps, torch)
    if part("sampler"):
        bench_sampler(o.reps)
    if part("file"):
        bench_file(o.file_size, o.build, o.reps)
    if part("records"):
        bench_records(o.records_size, o.reps)


if __name__ == "__main__":
    main()
