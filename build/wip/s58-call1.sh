#!/bin/sh
# s58-call1.sh (for session 58): the checks session 57's last change (the query split
# across a DeepSeek-V2 decode step's branch, s57-call9.sh) did not get for lack of
# device time: the CUDA goldens of every architecture, TestBranchedGraph, the branch
# queue tests, TestMoERouting, conformance and deepseek2's CUDA tests, on the committed
# PTX; then HEAD's figures, `bench -p 512 -n 128 -r 3` of the 8B Q4_K_M and V2-Lite
# Q4_K_M. Local steps: bin/dev built (TESTS="cuda archs deepseek2"); testdata/vocab,
# testdata/tokenizers and kernels/cuda/*.ptx held out of the carry; carry bin/dev.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s58c1}"
tgroup 0 'TestBranchedGraph|TestBranchQueue|TestMoERouting|TestGroupsSpaced|TestAttentionLatent' 250
tgroup 1 'Conformance' 250
model_tests 250
wait
grep -E -- '--- (PASS|FAIL)' /tmp/g0.log | head -20
el "tests done"
for m in q4 v2; do
	el "$m: $(timeout -s KILL 150 $E bench -backend cuda -p 512 -n 128 -r 3 -m /tmp/$m.gguf 2>&1 | grep '^| ' | tail -2 | tr '\n' ' ')"
done
el done
