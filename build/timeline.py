#!/usr/bin/env python3
"""timeline.py: a decode step's kernels from an nsys trace, as a timeline.

    nsys profile -t cuda --cuda-graph-trace=node -o P ember bench ... -p 0 -n 32 -r 1
    nsys export --type sqlite -o P.sqlite P.nsys-rep
    python3 build/timeline.py P.sqlite [layers]

Prints the mean step time (between the steps' last kernels, argmax), then, for layers
MoE layers in the middle of the last full step, each kernel's start and end in us from
the window's start, its stream and grid, so that overlap (branches) and the gaps of the
chain show."""
import sqlite3
import sys

db = sqlite3.connect(sys.argv[1])
want = int(sys.argv[2]) if len(sys.argv) > 2 else 2
names = dict(db.execute("select id, value from StringIds"))
rows = db.execute(
    "select start, end, streamId, shortName, gridX, gridY, gridZ from CUPTI_ACTIVITY_KIND_KERNEL order by start"
).fetchall()
ks = [(s, e, st, names.get(n, str(n)), gx, gy) for s, e, st, n, gx, gy, gz in rows]
print(f"{len(ks)} kernels")
ends = [i for i, k in enumerate(ks) if "argmax" in k[3]]
if len(ends) < 4:
    print("too few steps")
    sys.exit(0)
steps = [(ks[ends[j]][1] - ks[ends[j - 1]][1]) / 1000 for j in range(len(ends) // 2, len(ends))]
steps.sort()
print(f"steps {len(ends)}: median {steps[len(steps) // 2]:.1f} us, min {steps[0]:.1f} us")
a, b = ends[-2] + 1, ends[-1]
step = ks[a : b + 1]
busy = 0
cur_end = None
for s, e, *_ in step:
    if cur_end is None or s > cur_end:
        busy += e - s
        cur_end = e
    elif e > cur_end:
        busy += e - cur_end
        cur_end = e
span = step[-1][1] - step[0][0]
print(f"last step: {len(step)} kernels, {span / 1000:.1f} us, GPU busy (any kernel) {busy / 1000:.1f} us")
tops = [i for i, k in enumerate(step) if "moe_topk" in k[3]]
if len(tops) > want + 2:
    mid = len(tops) // 2
    lo = tops[mid - 1] + 1
    hi = tops[mid + want - 1] + 1
else:
    lo, hi = 0, min(len(step), 60)
t0 = step[lo][0]
for s, e, st, n, gx, gy in step[lo:hi]:
    print(f"{(s - t0) / 1000:9.2f} {(e - t0) / 1000:9.2f} {(e - s) / 1000:7.2f}  s{st:<3} {gx}x{gy:<4} {n}")
