#!/usr/bin/env python3
"""ab-sum.py "A1 A2 ..." "B1 B2 ...": the summary line of gpu-setup.sh's ab (paired
rounds of two sides): each side's median, B/A of the medians, the rounds B won and the
two-sided sign test's p for that many wins (ties and unreadable rounds left out)."""
import math
import statistics
import sys


def nums(s):
    out = []
    for w in s.split():
        try:
            out.append(float(w))
        except ValueError:
            out.append(None)
    return out


def sign_p(wins, n):
    """Two-sided sign test: the chance of a split at least this uneven with p = 1/2."""
    if n == 0:
        return 1.0
    k = min(wins, n - wins)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def summary(a, b):
    pairs = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
    if not pairs:
        return "ab: no readable rounds"
    ma = statistics.median(x for x, _ in pairs)
    mb = statistics.median(y for _, y in pairs)
    decided = [(x, y) for x, y in pairs if x != y]
    wins = sum(1 for x, y in decided if y > x)
    return (f"ab: medians A {ma:.1f} B {mb:.1f}, B/A {mb / ma:.4f}; B won {wins} of {len(decided)}"
            f" (sign test p {sign_p(wins, len(decided)):.3f}); {len(a) - len(pairs)} rounds unreadable")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    print(summary(nums(sys.argv[1]), nums(sys.argv[2])))
