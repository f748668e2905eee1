#!/bin/sh
# s36-call7.sh: mmv_multi_norm (a decode row's add_rms_norm_q8_k_1 inside the Q/K/V or
# gate/up mmv_multi after it; block 0 makes the row, the others wait on a flag). Every
# module's PTX made on the H200 (mv1.cuh changed: every hash), returned as ptx.tar.xz and
# loaded from there (EMBER_CUDA_PTX_DIR); the fused, conformance and kernel-name tests,
# the CUDA goldens and TestFedDecodeCUDA; then tg128 against EMBER_CUDA_NO_NORM_GATE=1,
# rounds alternating, 8B Q4_K_M and V2-Lite. bin/dev built with TESTS="cuda archs". ~8 min.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s36c7}"
ptx_all /tmp/ptx36
export EMBER_CUDA_PTX_DIR=/tmp/ptx36
tgroup 0 'TestFusedNormGate|TestFusedDecoderLayers|TestFuse|TestKernelNamesExist|TestFeeder|TestMatVec' 240
tgroup 1 '^TestConformance$' 240
(cd inference/model/archs && timeout -s KILL 240 "$R/bin/dev/archs.test" -test.v -test.run 'TestGoldensCUDA$|TestFedDecodeCUDA' 2>&1 | grep -E '^(--- |ok|FAIL|PASS)' | tail -6) &
wait
el tests done
B="bench -backend cuda -p 0 -n 128 -r 3"
for r in 1 2 3; do
	el "8B gate: $(q "$E" $B -m /tmp/q4.gguf)"
	el "8B no gate: $(q env EMBER_CUDA_NO_NORM_GATE=1 "$E" $B -m /tmp/q4.gguf)"
done
for r in 1 2; do
	el "V2 gate: $(q "$E" $B -m /tmp/v2.gguf)"
	el "V2 no gate: $(q env EMBER_CUDA_NO_NORM_GATE=1 "$E" $B -m /tmp/v2.gguf)"
done
el "8B 64 streams: $(s "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128)"
