#!/usr/bin/env python3
"""Where a FUSE daemon's time goes per request, from `perf record`.

Reads the text of `perf script -F pid,tid,time,event,ip,dso,trace` of a
system-wide recording of the FUSE tracepoints, of CPU samples, or both:

    perf record -a -e fuse:fuse_request_send -e fuse:fuse_request_end -- CMD
    perf record -a -e cpu-clock -c 1000000 -- CMD

From the tracepoints, for the FUSE connection the daemon answers: each
request kind, how many, and the time from the kernel sending it to the
answer (median and mean, microseconds). From the CPU samples (-c 1000000:
one per millisecond of CPU): the daemon's CPU split by thread (the main
thread, which runs the event loop and JS in a Node daemon, and the others)
and by where the sampled instruction was: the kernel, libfuse, the C
library, OpenSSL, the node executable (V8's interpreter and runtime,
libuv, Node), addons (*.node), code V8 compiled (JS), anything else; per
request when the recording has both, or when --requests gives the count
(from a recording of the same work with the tracepoints).

Usage: perf script ... | request-profile.py --pid PID [--label TEXT]
           [--requests N] [--sample-ns NS]
"""

import argparse
import re
import statistics
import sys
from collections import Counter, defaultdict

LINE = re.compile(r"^\s*(\d+)/(\d+)\s+([\d.]+):\s+(\S+):\s*(.*)$")
SEND = re.compile(r"connection (\d+) req (\d+) opcode \d+ \((\w+)\)")
END = re.compile(r"connection (\d+) req (\d+) len \d+ error (-?\d+)")
DSO = re.compile(r"\(([^()]*)\)\s*$")


def part(dso):
    """The part of the daemon a sample's DSO belongs to."""
    if dso.startswith("[kernel") or dso in ("[vdso]", "[vsyscall]"):
        return "kernel"
    if "libfuse" in dso:
        return "libfuse"
    if re.search(r"/(libc|libm|libpthread)[.-]|/ld-linux", dso):
        return "libc"
    if "libcrypto" in dso or "libssl" in dso:
        return "openssl"
    if dso.endswith("/node"):
        return "node"
    if dso.endswith(".node"):
        return "addons"
    if dso in ("[unknown]", "") or dso.startswith("/tmp/perf-") or dso.startswith("[anon") or "memfd:" in dso:
        return "JS"
    return "other"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pid", type=int, required=True, help="the daemon's process id")
    ap.add_argument("--label", default="")
    ap.add_argument("--requests", type=int, default=0, help="requests of the same work, for CPU per request")
    ap.add_argument("--sample-ns", type=int, default=1_000_000, help="cpu-clock's -c")
    args = ap.parse_args()

    sent = {}  # (connection, unique) -> (request kind, time)
    ends = []  # (connection, unique, time)
    answered = Counter()  # connection -> requests the daemon's threads answered
    cpu = Counter()  # (thread kind, part) -> samples
    for line in sys.stdin:
        m = LINE.match(line)
        if not m:
            continue
        pid, tid, t, event, rest = int(m[1]), int(m[2]), float(m[3]), m[4], m[5]
        if event.startswith("fuse:fuse_request_send"):
            s = SEND.search(rest)
            if s:
                sent[(s[1], s[2])] = (s[3].removeprefix("FUSE_"), t)
        elif event.startswith("fuse:fuse_request_end"):
            e = END.search(rest)
            if e:
                ends.append((e[1], e[2], t))
                if pid == args.pid:
                    answered[e[1]] += 1
        elif event.startswith("cpu-clock") and pid == args.pid:
            d = DSO.search(rest)
            cpu[("main" if tid == pid else "other", part(d[1] if d else ""))] += 1

    title = f" ({args.label})" if args.label else ""
    total = args.requests
    if answered:
        conn = answered.most_common(1)[0][0]
        lat = defaultdict(list)  # request kind -> [seconds]
        for c, u, t in ends:
            s = sent.pop((c, u), None) if c == conn else None
            if s:
                lat[s[0]].append(t - s[1])
        total = sum(len(v) for v in lat.values())
        print(f"requests{title}: {total}")
        print(f"  {'request':<14}{'count':>8}{'median us':>11}{'mean us':>9}{'sum s':>8}")
        for op, v in sorted(lat.items(), key=lambda kv: -sum(kv[1])):
            print(f"  {op:<14}{len(v):>8}{statistics.median(v) * 1e6:>11.0f}{statistics.fmean(v) * 1e6:>9.0f}{sum(v):>8.2f}")
    elif not cpu:
        sys.exit(f"request-profile: nothing of pid {args.pid} in the recording")

    if cpu:
        sec = lambda n: n * args.sample_ns / 1e9  # noqa: E731
        print(f"daemon CPU{title}: {sec(sum(cpu.values())):.2f} s" + (f", {sec(sum(cpu.values())) / total * 1e6:.1f} us per request" if total else ""))
        for kind in ("main", "other"):
            parts = sorted(((k[1], n) for k, n in cpu.items() if k[0] == kind), key=lambda kv: -kv[1])
            if not parts:
                continue
            unit = (lambda n: f"{sec(n) / total * 1e6:.1f} us") if total else (lambda n: f"{sec(n):.2f} s")
            print(f"  {kind} thread{'' if kind == 'main' else 's'} {unit(sum(n for _, n in parts))}: " + ", ".join(f"{k} {unit(n)}" for k, n in parts))


if __name__ == "__main__":
    main()
