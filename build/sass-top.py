#!/usr/bin/env python3
"""sass-top.py: where a kernel's instructions go, from ncu's source page of one launch
(`ncu -i REP --page source --csv --print-source sass > sass.csv`; profile-cuda.sh with
SASS=1 writes it): the warp instructions executed by opcode, then the hottest stretches
of straight-line code (consecutive SASS instructions executed equally often: a loop
body's basic blocks) with their instructions, so that a loop's overhead shows beside its
MMA or memory instructions.

    python3 build/sass-top.py sass.csv [blocks]
"""
import collections
import csv
import sys


def opcode(ins):
    """The opcode of a SASS instruction, its predicate and modifiers left out."""
    w = ins.split()
    if w and w[0].startswith("@"):
        w = w[1:]
    return w[0].split(".")[0] if w else "?"


def main():
    rows = list(csv.reader(open(sys.argv[1])))
    nblocks = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    h = next(i for i, r in enumerate(rows) if "Source" in r and "Address" in r)
    hdr = rows[h]
    si = hdr.index("Source")
    xi = next(i for i, c in enumerate(hdr) if c.startswith("Instructions Executed"))
    st = [i for i, c in enumerate(hdr) if c.startswith("Warp Stall Sampling (All")]
    code = []  # (executions, stall samples, instruction)
    for r in rows[h + 1:]:
        if len(r) <= xi:
            continue
        try:
            n = int(float(r[xi].replace(",", "") or 0))
            s = int(float(r[st[0]].replace(",", "") or 0)) if st else 0
        except ValueError:
            continue
        code.append((n, s, r[si].strip()))
    tot = sum(c[0] for c in code) or 1
    ops, stalls = collections.Counter(), collections.Counter()
    for n, s, ins in code:
        ops[opcode(ins)] += n
        stalls[opcode(ins)] += s
    print(f"{tot} warp instructions executed, {len(code)} SASS instructions")
    for op, n in ops.most_common(30):
        print(f"  {op:12s} {n:12d} {100 * n / tot:5.1f}%  stall samples {stalls[op]}")
    runs = []  # [first, last, executions]
    for i, (n, _, _) in enumerate(code):
        if runs and runs[-1][2] == n and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i, n])
    for a, b, n in sorted(runs, key=lambda r: -(r[1] - r[0] + 1) * r[2])[:nblocks]:
        k = b - a + 1
        body = code[a:b + 1]
        kinds = collections.Counter(opcode(ins) for _, _, ins in body)
        print(f"\nlines {a}-{b}: {k} instructions x {n} = {100 * k * n / tot:.1f}% of all; "
              + ", ".join(f"{o} {c}" for o, c in kinds.most_common(8)))
        for _, s, ins in body:
            print(f"    {s:5d}  {ins}")


if __name__ == "__main__":
    main()
