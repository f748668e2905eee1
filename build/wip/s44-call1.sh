#!/bin/sh
# s44-call1.sh (written in session 43, not run: its device time was spent): weight loads
# with an L2 evict-first policy (build/wip/wevict.patch: mv1.cuh's ldw16/ldw8/ldw2, all
# the batch-1 products' weight loads; EMBER_WEVICT 0 = the committed code, bit for bit
# the same PTX, checked with nvcc 12.4).
# Why: session 43's moe_topk with its two loops unrolled (~600 more straight-line
# instructions on one warp) lost 5.5% of V2-Lite tg128 (~3.8 us a layer, ~6 ns an
# instruction), the same routing as loops was even: a small kernel's instructions seem
# to come from far away. A step streams 1.5-5 GB of weights through the 50 MB L2 (~55 MB
# a V2-Lite layer), so each layer's kernel code, activation rows, KV rows and small
# tensors are likely evicted before their next use. Evict-first weight lines would keep
# them. Variants: ef (-DEMBER_WEVICT=1, L2 evict-first), nc (=2, also
# ld.global.nc.L1::no_allocate), tree (=0, the control); each against the embedded PTX.
# And build/wip/moe-roll.patch: moe_topk's routing with its loops rolled and one called
# copy of the double exp (-DMOE_ROLL=1: 2,464 SASS instructions against 4,576; the
# same operations, so the same bits; 0 gives main's PTX), alone (roll) and with ef
# (efroll, the variant the tests run on).
# First build/micro/ifetch.cu (~30 s), which measures the same thing without the engine:
# a tiny kernel's straight-line code after a plain or an evict-first 16/55 MB stream.
# bin/dev: TESTS="cuda deepseek2" sh build/dev-build.sh on main (the patch changes no Go
# code); carry bin/dev with testdata/vocab and testdata/tokenizers moved out (64 MiB).
set -u
(cd build/micro && nvcc -arch=sm_90 -O3 -fmad=false -o /tmp/ifetch ifetch.cu && timeout 120 /tmp/ifetch)
for p in wevict moe-roll; do
	{ git apply build/wip/$p.patch || patch -p1 -s <build/wip/$p.patch; } || { echo "$p.patch does not apply"; exit 1; }
done
MODULES="matmul moe mvs" VARIANTS="efroll:-DEMBER_WEVICT=1,-DMOE_ROLL=1 ef:-DEMBER_WEVICT=1 nc:-DEMBER_WEVICT=2 roll:-DMOE_ROLL=1 tree:" \
	BENCH="q4 v2" ROUNDS=2 \
	TESTS='Conformance/MatMul|MatVec|MMV|MoERouting|HeadProducts' sh build/ptx-variants.sh
R=$PWD; (cd inference/model/deepseek2 && EMBER_CUDA_PTX_DIR=/tmp/pv-efroll timeout -s KILL 200 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3)
