#!/bin/sh
# s51-call3.sh: call 2 lost both patches (lo-splitk, q4k-r2), which were reverted; the
# tree's kernels are main's but for matmul.cu's generic products moved to mmvgen.cuh and
# mv1lo.cuh's opening comment. Every module's PTX made here, each body compared with the
# committed one (all should match: only the sources' hash line changes).
set -u
L=${OUT:-/tmp/s51c3}
mkdir -p "$L"
sh build/ptx-copy.sh /tmp/pn || echo "PTX FAILED"
n=0
for f in kernels/cuda/*.ptx; do
	m=$(basename "$f")
	tail -n +2 "$f" >/tmp/ba
	tail -n +2 "/tmp/pn/$m" >/tmp/bb
	if cmp -s /tmp/ba /tmp/bb; then n=$((n + 1)); else echo "body differs: $m"; fi
done
echo "$n bodies match"
(cd /tmp/pn && tar cJf "$L/ptx.tar.xz" *.ptx)
