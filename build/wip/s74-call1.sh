#!/bin/sh
# s74-call1.sh (session 74): mmv_route's guessed loads (build/wip/s74-guess.patch, applied
# first; moe.cu's moe_guess; ROUTE_SPEC 1: every warp its first task by the guess while
# warp 0 routes, /tmp/px; 2: warps 1-3 two tasks, warp 0 none, /tmp/px2), and the tests
# mended after s73-call3 (TestAttentionLatentBits, TestAttentionVBBits, TestVBQueue;
# vbFuse's host side without the global Q8_K scratch). Every module's PTX made here
# (ptx.tar.xz; moe.ptx of form 2 as moe-spec2.ptx). Tests on /tmp/px: the latent/vb
# group and TestMoERouting with and without the guess (its ties cases force a wrong
# guess), the goldens, deepseek2's CUDA tests; TestMoERouting on /tmp/px2. V2-Lite tg128
# sweep: form 1, guess off, form 2, EMBER_CUDA_VB=off; the 8B once; timelines with the
# guess on and off. SHORT=1 (when little device time is left): the key tests, a
# three-way sweep of 4 rounds, no 8B, no timelines.
# Before: sh build/dev-build.sh; hold PTX, vocab, tokenizers out; carry bin/dev.
set -u
SHORT=${SHORT:-}
if [ -n "$SHORT" ]; then export MODELS="v2"; else export MODELS="q4 v2"; fi
. build/gpu-setup.sh "${OUT:-/tmp/s74c1}"
ptx_all /tmp/px
mkdir -p /tmp/px2 && cp /tmp/px/*.ptx kernels/cuda/*.cu kernels/cuda/*.cuh /tmp/px2/ &&
	sh build/ptx-one.sh /tmp/px2 moe -DROUTE_SPEC=2 && cp /tmp/px2/moe.ptx "$L/moe-spec2.ptx" || el "PX2 FAILED"
export EMBER_CUDA_PTX_DIR=/tmp/px
if [ -n "$SHORT" ]; then
	tgroup 0 'TestAttentionVB|TestAttentionLatentBits|TestVBQueue|TestMoERouting|TestMMVQueuePairedRuns' 150
	model_tests 150
else
	tgroup 0 'TestAttentionVB|TestAttentionLatent|TestShortAttention|TestLatentAttention|TestKernelNamesExist|TestEmbeddedKernelsWait|TestBranchedGraph|TestVBQueue|TestAbsorbQueue|TestMoERouting|TestMMVQueuePairedRuns' 240
	model_tests 240
	(cd inference/backend/cuda && EMBER_CUDA_PTX_DIR=/tmp/px2 timeout -s KILL 200 "$R/bin/dev/cuda.test" -test.v -test.run 'TestMoERouting' >/tmp/g1.log 2>&1) &
fi
wait
grep -E -- '^(--- |ok|FAIL|PASS)|latentvb|latent_gpu|moe_topk' /tmp/g0.log | tail -40
cp /tmp/g0.log "$L/g0.log"
if [ -z "$SHORT" ]; then
	grep -E -- '^(--- |ok|FAIL|PASS)|moe_topk' /tmp/g1.log | tail -8
	cp /tmp/g1.log "$L/g1.log"
fi
el "tests done"
P1="EMBER_CUDA_PTX_DIR=/tmp/px $E"
if [ -n "$SHORT" ]; then
	sweep 4 v2 "$P1" "EMBER_CUDA_ROUTE_SPEC=off $P1" "EMBER_CUDA_PTX_DIR=/tmp/px2 $E" 2>&1 | tee "$L/sweep-v2.txt"
	el done
	exit 0
fi
sweep 6 v2 "$P1" "EMBER_CUDA_ROUTE_SPEC=off $P1" "EMBER_CUDA_PTX_DIR=/tmp/px2 $E" "EMBER_CUDA_VB=off $P1" 2>&1 | tee "$L/sweep-v2.txt"
el "q4 tg128: $(tg1 q4 "$P1")"
unset EMBER_CUDA_PTX_DIR
(sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED")
tl tl_v2_spec.log v2
tl tl_v2_nospec.log v2 EMBER_CUDA_ROUTE_SPEC=off
el done
