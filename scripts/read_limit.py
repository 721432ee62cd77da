#!/usr/bin/env python3
"""The read limit of this machine for a set of files: every byte copied from the page cache into
user memory, on N threads, each reading into one reused buffer (scripts/bench_lib.sh, read_limit).

Why not `cat > /dev/null`: cat reads on one thread, while npgx scans on all cores; and whether a
given coreutils reads at all when its output is /dev/null (it may splice or copy_file_range) is a
property of the version, not of the machine. Here every byte goes through pread(2) into a
page-aligned buffer that is reused, which is the least any scanner of the files has to do.

Work is cut into pieces of at most PIECE bytes (a large file is read by several threads at once,
a small file is one piece); threads take pieces in order from a shared list. Prints the best wall
time (seconds) of --runs passes, measured from the first open to the last read, so the
interpreter's start-up is not counted; --verbose adds bytes and files on stderr.

Cold cache (issue 35): --cold drops every file's pages from the page cache before each pass
(posix_fadvise POSIX_FADV_DONTNEED on every file: no root needed; only pages no process maps
or dirties can go, so check with `fincore` that they did), so the pass measures the disk; give
it more threads than cores (--threads 16) to keep enough requests in flight to saturate it.
--evict only drops the pages and exits (the benches call it before each cold run of npgx).

Usage: read_limit.py [--threads N] [--runs N] [--buffer BYTES] [--cold | --evict] PATH...
       (files or directories)
"""

import argparse
import mmap
import os
import sys
import threading
import time

PIECE = 16 << 20


def files_of(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, names in os.walk(p):
                dirs.sort()
                for n in sorted(names):
                    yield os.path.join(root, n)
        else:
            yield p


def pieces(files):
    out = []
    for f in files:
        size = os.stat(f).st_size
        start = 0
        while True:
            out.append((f, start, min(size, start + PIECE)))
            start += PIECE
            if start >= size:
                break
    return out


def evict(paths):
    """Drops the page-cache pages of every file under paths."""
    for f in files_of(paths):
        fd = os.open(f, os.O_RDONLY)
        try:
            # dirty pages (a tree just written) cannot be dropped before they are written back
            os.fdatasync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def one_pass(work, threads, buffer):
    lock = threading.Lock()
    next_piece = [0]
    totals = [0] * threads

    def worker(k):
        # Page-aligned (an anonymous mapping), so the kernel's copy lands at the source's offset
        # within a page: a malloc'ed buffer starts 16 bytes past a page, and on some CPUs (the
        # AMD EPYC of docs/performance.md) `rep movsb` copies to such an offset 4-5x slower.
        buf = mmap.mmap(-1, buffer)
        view = memoryview(buf)
        n = 0
        while True:
            with lock:
                i = next_piece[0]
                next_piece[0] += 1
            if i >= len(work):
                break
            path, start, end = work[i]
            fd = os.open(path, os.O_RDONLY)
            try:
                at = start
                while at < end:
                    got = os.preadv(fd, [view[: min(buffer, end - at)]], at)
                    if got == 0:
                        break
                    at += got
                    n += got
            finally:
                os.close(fd)
        totals[k] = n

    ts = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return sum(totals)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--buffer", type=int, default=1 << 20)
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--cold", action="store_true", help="drop the files' cached pages before each pass")
    ap.add_argument("--evict", action="store_true", help="only drop the files' cached pages")
    ap.add_argument("paths", nargs="+")
    a = ap.parse_args()
    if a.evict:
        evict(a.paths)
        return
    best = None
    for _ in range(a.runs):
        if a.cold:
            evict(a.paths)
        start = time.perf_counter()
        work = pieces(files_of(a.paths))
        total = one_pass(work, a.threads, a.buffer)
        t = time.perf_counter() - start
        best = t if best is None else min(best, t)
    if a.verbose:
        files = len({w[0] for w in work})
        print(f"read {total} bytes of {files} files on {a.threads} threads", file=sys.stderr)
    print(f"{best:.4f}")


if __name__ == "__main__":
    main()
