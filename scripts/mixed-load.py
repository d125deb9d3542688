#!/usr/bin/env python3
"""One worker of the mixed load (test/mount/leak.test.ts, liveness.test.ts,
benchmark.bash -extractloop N -mixed): many short-lived opens, sparse writes
at random offsets, ioctls that fail (FICLONERANGE, FIDEDUPERANGE), splice,
truncates and unlinks, on up to 48 files in DIR (its own).

    mixed-load.py DIR SEED OPS [PROCS]

With PROCS, runs PROCS workers at once, worker i in DIR/p<i> with seed
SEED+i, and fails if one does.

Closing a file sends RELEASE without waiting for its answer, so several
workers keep bursts of requests in flight: libfuse2 then starts worker
threads and ends them again all the time, the path the untar/rm
extractloop never takes.

Prints one JSON line per worker: operations run per kind, the errno names the ioctls
failed with, spliced ranges checked, and the slowest operation (seconds;
each is a few system calls, so every request it made was answered within
that time). Exit 1 when a spliced range does not read back as its source.
"""
import errno
import fcntl
import json
import os
import random
import struct
import sys
import time
import traceback

FICLONERANGE = 0x4020940D  # _IOW(0x94, 13, struct file_clone_range)
FIDEDUPERANGE = 0xC0189436  # _IOWR(0x94, 54, struct file_dedupe_range)
FILES = 48
MAX_OFFSET = 4 << 20
MAX_LEN = 64 << 10

rng = random.Random()
root = ''
names = []
alive = []  # files this worker has made and not removed
ioctl_errors = {}
spliced = 0


def some(k):
    return rng.sample(alive, min(k, len(alive)))


def create():
    p = rng.choice(names)
    fd = os.open(p, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    try:
        os.write(fd, rng.randbytes(rng.randint(1, 8192)))
    finally:
        os.close(fd)
    if p not in alive:
        alive.append(p)


def sparse_write():
    fd = os.open(rng.choice(alive), os.O_WRONLY)
    try:
        os.pwrite(fd, rng.randbytes(rng.randint(1, MAX_LEN)), rng.randrange(MAX_OFFSET))
    finally:
        os.close(fd)


def opens():
    fds = []
    try:
        for i, p in enumerate(some(rng.randint(8, FILES))):
            fds.append(os.open(p, os.O_RDONLY if i % 2 else os.O_WRONLY))
            os.fstat(fds[-1])
    finally:
        for fd in fds:
            os.close(fd)


def failed_ioctl(fd, req, arg):
    try:
        fcntl.ioctl(fd, req, arg)
        name = 'succeeded'
    except OSError as e:
        name = 'EOPNOTSUPP' if e.errno == errno.EOPNOTSUPP else errno.errorcode.get(e.errno, str(e.errno))
    ioctl_errors[name] = ioctl_errors.get(name, 0) + 1


def clone_range():
    src, dst = rng.choice(alive), rng.choice(alive)
    a = os.open(src, os.O_RDONLY)
    b = os.open(dst, os.O_WRONLY)
    try:
        os.fstat(a)
        os.fstat(b)
        arg = struct.pack('qQQQ', a, rng.randrange(0, MAX_OFFSET, 4096), 4096 * rng.randint(1, 16), rng.randrange(0, MAX_OFFSET, 4096))
        failed_ioctl(b, FICLONERANGE, arg)
    finally:
        os.close(b)
        os.close(a)


def dedupe_range():
    dests = some(rng.randint(1, 32))
    a = os.open(rng.choice(alive), os.O_RDONLY)
    fds = []
    try:
        arg = struct.pack('QQHHI', 0, 4096 * rng.randint(1, 16), len(dests), 0, 0)
        for p in dests:
            fds.append(os.open(p, os.O_WRONLY))
            arg += struct.pack('qQQiI', fds[-1], rng.randrange(0, MAX_OFFSET, 4096), 0, 0, 0)
        failed_ioctl(a, FIDEDUPERANGE, bytearray(arg))
    finally:
        for fd in fds:
            os.close(fd)
        os.close(a)


def splice():
    global spliced
    src, dst = some(2) if len(alive) >= 2 else (alive[0], alive[0])
    a = os.open(src, os.O_RDONLY)
    b = os.open(dst, os.O_RDWR)
    r, w = os.pipe()
    try:
        size = os.fstat(a).st_size
        if size == 0:
            return
        off_in = rng.randrange(size)
        want = min(rng.randint(1, MAX_LEN), size - off_in, 65536)  # a pipe holds 64 KiB
        off_out = rng.randrange(MAX_OFFSET)
        n = os.splice(a, w, want, offset_src=off_in)
        done = 0
        while done < n:
            done += os.splice(r, b, n - done, offset_dst=off_out + done)
        if src != dst:
            if os.pread(b, n, off_out) != os.pread(a, n, off_in):
                sys.stderr.write('%s: %d bytes spliced from %s@%d to %s@%d read back differently\n' % (root, n, src, off_in, dst, off_out))
                sys.exit(1)
            spliced += 1
    finally:
        os.close(r)
        os.close(w)
        os.close(b)
        os.close(a)


def truncate():
    os.truncate(rng.choice(alive), rng.randrange(MAX_OFFSET))


def unlink():
    p = rng.choice(alive)
    os.unlink(p)
    alive.remove(p)


KINDS = [(opens, 25), (clone_range, 15), (dedupe_range, 15), (sparse_write, 15), (splice, 10), (create, 10), (truncate, 5), (unlink, 5)]


def work(dir, seed, ops):
    global root, names
    rng.seed(seed)
    root = dir
    os.makedirs(root, exist_ok=True)
    names = [os.path.join(root, 'f%02d' % i) for i in range(FILES)]
    counts = {}
    slowest = (0.0, '')
    for _ in range(ops):
        fn = create if len(alive) < 2 else rng.choices([k for k, _ in KINDS], [w for _, w in KINDS])[0]
        t = time.monotonic()
        fn()
        dt = time.monotonic() - t
        counts[fn.__name__] = counts.get(fn.__name__, 0) + 1
        if dt > slowest[0]:
            slowest = (dt, fn.__name__)
    print(json.dumps({'ops': ops, 'counts': counts, 'ioctlErrors': ioctl_errors, 'spliced': spliced, 'slowest': slowest[0], 'slowestKind': slowest[1]}), flush=True)


def main():
    dir, seed, ops = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    if len(sys.argv) < 5:
        work(dir, seed, ops)
        return 0
    children = []
    for i in range(int(sys.argv[4])):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                work(os.path.join(dir, 'p%d' % i), seed + i, ops)
                code = 0
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(code)
        children.append(pid)
    failed = 0
    for pid in children:
        _, status = os.waitpid(pid, 0)
        failed += status != 0
    return 1 if failed else 0


sys.exit(main())
