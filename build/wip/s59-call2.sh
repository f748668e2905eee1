#!/bin/sh
# s59-call2.sh: the timeline again with each record's %gridid (exact launch matching,
# 59's first call named some mat-vecs wrongly), V2-Lite and 8B batch 40; and the routed
# gate/up held to 128 registers (launch_bounds(128, 4), grid still 3 an SM) so that a
# 120-register mat-vec (the shared experts' down, mmv_q6_k_1e) fits beside it: its
# timeline, MoE tests and a rotated tg128 sweep against the committed PTX.
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s59c2}"
(
	sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED"
	mkdir -p /tmp/tllb && cp /tmp/tl/*.ptx /tmp/tl/*.cu /tmp/tl/*.cuh /tmp/tllb/
	sed -i 's/__launch_bounds__(128, 3) mmv_route_q4_k/__launch_bounds__(128, 4) mmv_route_q4_k/' /tmp/tllb/moe.cu
	sh build/ptx-one.sh /tmp/tllb moe && el "tl+lb moe.ptx made"
) &
(
	sh build/ptx-copy.sh /tmp/lb || el "PTX FAILED"
	sed -i 's/__launch_bounds__(128, 3) mmv_route_q4_k/__launch_bounds__(128, 4) mmv_route_q4_k/' /tmp/lb/moe.cu
	sh build/ptx-one.sh /tmp/lb moe && el "lb moe.ptx made"
	(cd /tmp/lb && nvcc -arch=sm_90 -cubin -O3 -fmad=false --resource-usage -o /tmp/moe.cubin moe.cu 2>&1 | grep -A2 'properties for mmv_route_q4_k$')
) &
wait
for m in v2 q4; do
	EMBER_CUDA_PTX_DIR=/tmp/tl EMBER_CUDA_TIMELINE=40 timeout -s KILL 120 $E bench -backend cuda -p 0 -n 64 -r 1 -m /tmp/$m.gguf >"$L/tl_${m}.log" 2>&1
	el "$m: $(grep 'cuda timeline' "$L/tl_${m}.log")"
done
EMBER_CUDA_PTX_DIR=/tmp/tllb EMBER_CUDA_TIMELINE=40 timeout -s KILL 120 $E bench -backend cuda -p 0 -n 64 -r 1 -m /tmp/v2.gguf >"$L/tl_v2_lb.log" 2>&1
el "v2 lb: $(grep 'cuda timeline' "$L/tl_v2_lb.log")"
export EMBER_CUDA_PTX_DIR=/tmp/lb
tgroup 0 'MoE|Route|TopK|Conformance' 200
model_tests 200
wait
unset EMBER_CUDA_PTX_DIR
sweep 6 v2 "$E" "EMBER_CUDA_PTX_DIR=/tmp/lb $E"
cp /tmp/lb/moe.ptx "$L/moe_lb.ptx"
el done
