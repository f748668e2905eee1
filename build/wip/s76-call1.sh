#!/bin/sh
# s76-call1.sh (session 76): mmv_route's tasks split by role (moe.cu's ROUTE_W0D: warp 0,
# which loads only after it routes, takes ~(P - 3D) / 4 of its block's P tasks, warps 1-3
# the rest) against the committed split (every warp P / 4). moe.ptx with ROUTE_W0D 2, 3
# and 5 (/tmp/pd2 ..; n0 4, 3 and 2 of V2-Lite's ~21.3 tasks a block), TestMoERouting on
# pd2 and pd3 (bits), goldens and deepseek2's CUDA tests on pd2, a V2-Lite tg128 sweep
# (embedded, pd2, pd3, pd5), phase stamps (build/wip/s76-ph.py) of the committed split
# and of D 2, the 8B once. Before: sh build/dev-build.sh; hold PTX, vocab, tokenizers
# out; carry bin/dev.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s76c1}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
ptx_all /tmp/px
for D in 2 3 5; do
	mkdir -p /tmp/pd$D && cp /tmp/px/*.ptx /tmp/px/*.cu /tmp/px/*.cuh /tmp/pd$D/ &&
		sh build/ptx-one.sh /tmp/pd$D moe -DROUTE_W0D=$D && cp /tmp/pd$D/moe.ptx "$L/moe-d$D.ptx" || el "PD$D FAILED"
done
for D in 0 2; do
	mkdir -p /tmp/ph$D && cp /tmp/px/*.ptx /tmp/px/*.cu /tmp/px/*.cuh /tmp/ph$D/ && python3 build/wip/s76-ph.py /tmp/ph$D &&
		sh build/ptx-one.sh /tmp/ph$D moe -DROUTE_W0D=$D || el "PH$D FAILED"
done
el "variants made"
export EMBER_CUDA_PTX_DIR=/tmp/pd2
tgroup 0 'TestMoERouting$|TestKernelNamesExist' 220
model_tests 220
export EMBER_CUDA_PTX_DIR=/tmp/pd3
tgroup 1 'TestMoERouting$' 220
unset EMBER_CUDA_PTX_DIR
wait
cp /tmp/g0.log /tmp/g1.log "$L/"
el "tests done"
sweep 5 v2 "$E" "EMBER_CUDA_PTX_DIR=/tmp/pd2 $E" "EMBER_CUDA_PTX_DIR=/tmp/pd3 $E" "EMBER_CUDA_PTX_DIR=/tmp/pd5 $E" 2>&1 | tee "$L/sweep-v2.txt"
for D in 0 2; do
	EMBER_CUDA_PTX_DIR=/tmp/ph$D timeout -s KILL 120 "$E" bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/v2.gguf >"$L/ph$D.log" 2>&1
	el "ph$D: $(grep '^| ' "$L/ph$D.log" | tail -1 | cut -d'|' -f8)"
	awk '/^PR/ { k = ($5 == 0 ? "w0" : "w1-3") " blk " $3; c[k]++; n[k] += $9; g[k] += $14; r[k] += $16; s[k] += $18; e[k] += $20 }
END { for (k in c) printf "%s: %d warps, tasks %.2f, guess %.0f, route %.0f, sync %.0f, end %.0f ns\n", k, c[k], n[k] / c[k], g[k] / c[k], r[k] / c[k], s[k] / c[k], e[k] / c[k] }' "$L/ph$D.log" | sort
	xz -f "$L/ph$D.log"
done
el "q4 tg128: $(tg1 q4 "$E")"
el done
