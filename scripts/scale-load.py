#!/usr/bin/env python3
"""The workloads of benchmark.bash -scale: each measures one point of a
curve on a mounted directory and prints its figures as one JSON object.
The caller drops the page cache between them.

    scale-load.py create N DIR...       N empty files in each DIR, one
                                        directory after the other: seconds
    scale-load.py unlink N DIR...       the same files removed: seconds
    scale-load.py stat PATH             one stat of PATH: seconds
    scale-load.py randread FILE SECS    4 KiB reads at random 4 KiB-aligned
                                        offsets, each block at most once, for
                                        SECS seconds (or until every block was
                                        read), with readahead off: reads per
                                        second
    scale-load.py openfiles DIR K SECS PID
                                        K files of 64 KiB made in DIR and all
                                        held open; then for SECS seconds, in
                                        turn over the files, one 4 KiB write
                                        and one 4 KiB read at random offsets:
                                        requests (reads + writes) per second,
                                        and VmRSS of process PID (the daemon)
                                        while the K files are open
    scale-load.py deep DIR D            a chain of D directories under DIR with
                                        a file at the bottom: its path

Files are named f<i>, numbered from 0, with no padding: names of many
lengths, as in a real directory.
"""
import array
import json
import os
import random
import resource
import sys
import time

BLOCK = 4096
OPEN_FILE_SIZE = 64 << 10


def out(**fields):
    print(json.dumps(fields))


def create(n, dirs):
    t0 = time.perf_counter()
    for d in dirs:
        for i in range(n):
            os.close(os.open(os.path.join(d, f'f{i}'), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    out(seconds=time.perf_counter() - t0)


def unlink(n, dirs):
    t0 = time.perf_counter()
    for d in dirs:
        for i in range(n):
            os.unlink(os.path.join(d, f'f{i}'))
    out(seconds=time.perf_counter() - t0)


def stat(path):
    t0 = time.perf_counter()
    os.stat(path)
    out(seconds=time.perf_counter() - t0)


def randread(path, secs):
    # Each block is read once, in a random order: every read misses the page
    # cache. Drawn with repeats, the share of reads the page cache answers
    # would grow with the number of reads made, and so with the reader's own
    # speed, and would fall as the file grows for that reason alone.
    fd = os.open(path, os.O_RDONLY)
    blocks = os.fstat(fd).st_size // BLOCK
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
    order = array.array('Q', range(blocks))
    random.Random(1).shuffle(order)
    n = 0
    t0 = time.perf_counter()
    end = t0 + secs
    now = t0
    while n < blocks:
        for b in order[n:n + 64]:
            if len(os.pread(fd, BLOCK, b * BLOCK)) != BLOCK:
                raise SystemExit(f'{path}: short read')
        n = min(n + 64, blocks)
        now = time.perf_counter()
        if now >= end:
            break
    os.close(fd)
    out(reads=n, per_second=n / max(now - t0, 1e-9))


def vm_rss_kb(pid):
    with open(f'/proc/{pid}/status') as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    raise SystemExit(f'no VmRSS for {pid}')


def openfiles(d, k, secs, pid):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < k + 64:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, k + 64), hard))
    data = os.urandom(OPEN_FILE_SIZE)
    fds = []
    for i in range(k):
        fd = os.open(os.path.join(d, f'f{i}'), os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, data)
        fds.append(fd)
    rng = random.Random(2)
    blocks = OPEN_FILE_SIZE // BLOCK
    page = os.urandom(BLOCK)
    n = 0
    t0 = time.perf_counter()
    end = t0 + secs
    while True:
        for fd in fds:
            os.pwrite(fd, page, rng.randrange(blocks) * BLOCK)
            if len(os.pread(fd, BLOCK, rng.randrange(blocks) * BLOCK)) != BLOCK:
                raise SystemExit('short read')
            n += 2
            if n % 256 == 0 and time.perf_counter() >= end:
                break
        now = time.perf_counter()
        if now >= end:
            break
    rss = vm_rss_kb(pid)
    for fd in fds:
        os.close(fd)
    out(requests=n, per_second=n / (now - t0), rss_kb=rss)


def deep(d, depth):
    path = d
    for i in range(depth):
        path = os.path.join(path, f'd{i}')
        os.mkdir(path)
    path = os.path.join(path, 'leaf')
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o644))
    out(path=path)


def main(argv):
    cmd, args = argv[1], argv[2:]
    if cmd == 'create':
        create(int(args[0]), args[1:])
    elif cmd == 'unlink':
        unlink(int(args[0]), args[1:])
    elif cmd == 'stat':
        stat(args[0])
    elif cmd == 'randread':
        randread(args[0], float(args[1]))
    elif cmd == 'openfiles':
        openfiles(args[0], int(args[1]), float(args[2]), int(args[3]))
    elif cmd == 'deep':
        deep(args[0], int(args[1]))
    else:
        raise SystemExit(f'unknown workload {cmd}')


if __name__ == '__main__':
    main(sys.argv)
