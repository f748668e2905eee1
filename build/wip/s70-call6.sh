#!/bin/sh
# s70-call6.sh (written in session 70, not run): the engine's mla1 (build/wip/s70-mla1.patch,
# applied after s70-ah1.patch: kernels/cuda/mla1.cu; mla1.go's AttentionHalfMLA behind
# EMBER_CUDA_MLA1, which deepseek2's attnMLA offers a decode row's whole attention half
# before its chain of ops (deepseek2/half.go); TestMLA1Queue; TestAttnHalfCUDA), if
# s70-call1's mla1 micro beats the chain's ~19.4 us a layer by a good margin. Before the
# call: git apply build/wip/s70-ah1.patch build/wip/s70-mla1.patch (they carry nvcc-12.4
# ah1.ptx and mla1.ptx and the committed PTX with new hash lines, for the build only);
# TESTS="cuda deepseek2 archs" sh build/dev-build.sh; hold kernels/cuda/*.ptx,
# testdata/vocab and testdata/tokenizers out; carry bin/dev. After: compare every module
# in $L/ptx.tar.xz but ah1 and mla1 with the committed bodies here, then commit them with
# the patches if mla1 wins the sweep.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s70c6}"
(ptx_all /tmp/px) &
(sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED") &
tgroup 0 'TestMLA1|TestAH1Queue|TestKernelNamesExist|TestEmbeddedKernelsWait|TestMLAKVRoPE' 300
(cd inference/model/deepseek2 && timeout -s KILL 300 "$R/bin/dev/deepseek2.test" -test.v -test.run 'TestAttnHalfCUDA' 2>&1 | grep -E -- '^(--- |ok|FAIL|PASS)|half_cuda_test' | tail -8 | sed 's/^/attn half: /') &
(cd inference/model/deepseek2 && EMBER_CUDA_MLA1=1 timeout -s KILL 300 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3 | sed 's/^/deepseek2, mla1 on: /') &
(cd inference/model/archs && EMBER_CUDA_MLA1=1 timeout -s KILL 300 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA' 2>&1 | tail -3 | sed 's/^/goldens, mla1 on: /') &
wait
grep -E -- '^(--- |ok|FAIL|PASS)|mla1' /tmp/g0.log | tail -16
el "tests done; model and PTX ready"
export EMBER_CUDA_PTX_DIR=/tmp/px
for v in "" "EMBER_CUDA_MLA1=1"; do
	env $v timeout -s KILL 100 "$E" run -backend cuda -m /tmp/v2.gguf -n 48 -temp 0 -p "The capital of France is" 2>/dev/null | tail -c 300 | sed "s/^/greedy ${v:-chain}: /"
done
sweep 4 v2 "$E" "EMBER_CUDA_MLA1=1 $E" 2>&1 | tee "$L/sweep-v2.txt"
unset EMBER_CUDA_PTX_DIR
tl tl_chain.log v2
tl tl_mla1.log v2 EMBER_CUDA_MLA1=1
grep -E "mla1_q|mmv_route|attention_short|mla_kv" "$L/tl_mla1.log" | head -12
el done
