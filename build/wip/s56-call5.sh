#!/bin/sh
# s56-call5.sh (session 56): the committed build with defaultBranchEdges 3 (branch.go),
# on its embedded PTX: TestBranchedGraph and the queue tests, TestMoERouting, the CUDA
# goldens and deepseek2's CUDA tests; then the figures for the README (8B Q4_K_M and
# V2-Lite Q4_K_M, bench -p 512 -n 128 -r 3) and V2-Lite tg128 edges 7 against the new
# default, four rounds. Local steps: bin/dev built (TESTS="cuda archs deepseek2");
# testdata/vocab, testdata/tokenizers and kernels/cuda/*.ptx held out; carry bin/dev.
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s56c5}"
tgroup 0 'TestBranch|TestMoERouting$|TestKernelNamesExist' 200
model_tests 220
wait
grep -E -- '--- (PASS|FAIL)' /tmp/g0.log | head -20
el "tests done"
for m in q4 v2; do
	timeout -s KILL 150 $E bench -backend cuda -p 512 -n 128 -r 3 -m /tmp/$m.gguf 2>&1 | grep '^| ' | tail -2
	el "$m bench done"
done
t() { [ $(($(date +%s) - T0)) -lt 470 ]; }
t && ab 4 v2 "EMBER_CUDA_BRANCH_EDGES=7 $E" "$E"
el done
