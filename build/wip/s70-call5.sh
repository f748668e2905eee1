#!/bin/sh
# s70-call5.sh (written in session 70, not run): the engine's ah1 (build/wip/s70-ah1.patch:
# kernels/cuda/ah1.cu, ah1.go behind EMBER_CUDA_AH1 (1: the KV heads' blocks meet on
# counters; c: at cluster barriers, clusters of 16), TestAH1Queue, TestAH1Fused (both forms);
# rope_table moves from ops.cu into common.cuh, so every module's hash changes and
# ptx_all makes them all), if s70-call1's ah1 micro wins. Before the call: git apply
# build/wip/s70-ah1.patch (it carries an nvcc-12.4 ah1.ptx and the committed PTX with
# new hash lines, for the build only); TESTS="cuda archs" sh build/dev-build.sh; hold
# kernels/cuda/*.ptx, testdata/vocab and testdata/tokenizers out; carry bin/dev. After:
# check here that every module but ah1 in $L/ptx.tar.xz has the committed body (the
# same_bodies comparison, run on this machine: the PTX are not carried), then commit
# them all with the patch. If ah1 wins the sweep, make it the default (or keep the
# switch) by the figures.
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s70c5}"
# the tests on the binary's own PTX (the committed bodies, an nvcc-12.4 ah1.ptx) while the
# device's nvcc makes every module (the sweep and the timelines run on those)
(ptx_all /tmp/px) &
(sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED") &
tgroup 0 'TestAH1|TestKernelNamesExist|TestEmbeddedKernelsWait|TestFusedDecoderLayers|TestAttentionDec1|TestFFN' 300
for f in 1 c; do
	(cd inference/model/archs && EMBER_CUDA_AH1=$f timeout -s KILL 300 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA' 2>&1 | tail -3 | sed "s/^/goldens, ah1 $f: /") &
done
wait
grep -E -- '^(--- |ok|FAIL|PASS)|ah1' /tmp/g0.log | tail -24
el "tests done; model and PTX ready"
export EMBER_CUDA_PTX_DIR=/tmp/px
for v in "" "EMBER_CUDA_AH1=1" "EMBER_CUDA_AH1=c"; do
	env $v timeout -s KILL 100 "$E" run -backend cuda -m /tmp/q4.gguf -n 48 -temp 0 -p "The capital of France is" 2>/dev/null | tail -c 300 | sed "s/^/greedy ${v:-chain}: /"
done
sweep 4 q4 "$E" "EMBER_CUDA_AH1=1 $E" "EMBER_CUDA_AH1=c $E" 2>&1 | tee "$L/sweep-q4.txt"
unset EMBER_CUDA_PTX_DIR
tl tl_chain.log q4
tl tl_ah1.log q4 EMBER_CUDA_AH1=1
tl tl_ah1c.log q4 EMBER_CUDA_AH1=c
grep -E "ah1c?_q|mmv_multi|rope2_set|attention_dec|add_rms" "$L/tl_ah1.log" "$L/tl_ah1c.log" | head -24
el done
