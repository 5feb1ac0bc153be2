#!/usr/bin/env python3
"""Who launches the memsets in a capture, and what they clear (issue 29: 49 memsets an iteration
in GPT-2 B8 fp8, one beside each fp8 GEMM and each attention core, ~1 us each plus a launch gap).

    scripts/dev/memsets.py TRACE.sqlite

Reads laptime's nsys-schema SQLite (or nsys's own export) directly, an independent path from the
analyzer: every memset of the second half of the capture (steady iterations), grouped by its size,
its fill value, the runtime call that enqueued it (by correlation id: cudaMemsetAsync from our code
or a library's, or a driver-internal one with no runtime call) and the kernel that follows it on
its stream. Prints one line a group: count, bytes, value, mean duration (us), call, next kernel.
"""
import sqlite3
import sys
from collections import Counter, defaultdict


def main(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    names = dict(db.execute("SELECT id, value FROM StringIds"))
    runtime = {c: names.get(n, "?") for c, n in db.execute("SELECT correlationId, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME")}
    lo, hi = db.execute("SELECT MIN(start), MAX(\"end\") FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()
    mid = (lo + hi) // 2
    kernels = defaultdict(list)  # stream -> [(start, name)]
    for s, st, n in db.execute("SELECT start, streamId, shortName FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start >= ?", (mid,)):
        kernels[st].append((s, names.get(n, "?")))
    for v in kernels.values():
        v.sort()
    groups, durations = Counter(), defaultdict(float)
    rows = db.execute("SELECT start, \"end\", streamId, correlationId, value, bytes FROM CUPTI_ACTIVITY_KIND_MEMSET "
                      "WHERE start >= ?", (mid,))
    for s, e, st, corr, value, nbytes in rows:
        nxt = next((n for ks, n in kernels.get(st, []) if ks >= s), "(none)")
        key = (nbytes, value, runtime.get(corr, "(no runtime call)"), nxt[:90])
        groups[key] += 1
        durations[key] += (e - s) / 1e3
    if not groups:
        print(f"{path}: no memsets in the second half of the capture")
        return
    print(f"{path}: memsets in the second half of the capture, by size, value, call and the next kernel")
    print(f"{'count':>6} {'bytes':>12} {'value':>5} {'mean us':>8}  call / next kernel")
    for key, n in groups.most_common():
        nbytes, value, call, nxt = key
        print(f"{n:>6} {nbytes:>12} {value:>5} {durations[key] / n:>8.2f}  {call} / {nxt}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
