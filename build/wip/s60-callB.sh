#!/bin/sh
# s60-callB.sh: callA1's group 0 was killed at 300 s in TestMoERouting (17 tests passed
# before it; its log stayed on the machine). Here: every module's PTX, TestMoERouting
# alone (-v, its log returned), then callA2's timelines and sweep (fewer rounds) unless a
# tg128 run with both patches gives no figure.
# build/wip/s60-moe-old.cu (not kept) was 907560b's kernels/cuda/moe.cu: `git show
# 907560b:kernels/cuda/moe.cu >build/wip/s60-moe-old.cu` to run this again.
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s60cB}"
(
	sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED"
	rm -rf /tmp/tlold && cp -r /tmp/tl /tmp/tlold && cp build/wip/s60-moe-old.cu /tmp/tlold/moe.cu && sh build/ptx-one.sh /tmp/tlold moe
) &
ptx_all /tmp/px
rm -rf /tmp/old && cp -r /tmp/px /tmp/old && cp build/wip/s60-moe-old.cu /tmp/old/moe.cu && sh build/ptx-one.sh /tmp/old moe
(cd inference/backend/cuda && EMBER_CUDA_PTX_DIR=/tmp/px timeout -s KILL 150 "$R/bin/dev/cuda.test" -test.v -test.run '^TestMoERouting$' >"$L/moerouting.log" 2>&1; echo "rc $?" >>"$L/moerouting.log")
el "TestMoERouting: $(tail -3 "$L/moerouting.log" | tr '\n' ' ')"
grep -E -- '^(=== RUN|--- |    )' "$L/moerouting.log" | tail -8
wait
el "ptx dirs ready"
x=$(EMBER_CUDA_PTX_DIR=/tmp/px timeout -s KILL 40 "$E" bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/v2.gguf 2>&1 | grep '^| ' | tail -1)
el "one run, both patches: $x"
[ -n "$x" ] || { el "no figure: stop"; exit 1; }
tl tl_v2_head.log v2 EMBER_CUDA_PTX_DIR=/tmp/tlold EMBER_CUDA_NO_SUM_NORM=1
tl tl_v2_both.log v2
tl tl_v2_rb2.log v2 EMBER_CUDA_ROUTE_BLOCKS=2
O="EMBER_CUDA_PTX_DIR=/tmp/old" X="EMBER_CUDA_PTX_DIR=/tmp/px" NS="EMBER_CUDA_NO_SUM_NORM=1"
sweep ${ROUNDS:-5} v2 "$O $NS $E" "$X $NS $E" "$O $E" "$X $E" "$X EMBER_CUDA_ROUTE_BLOCKS=2 $E"
ab 2 q4 "$O $NS $E" "$X $E"
el done
