#!/bin/sh
# s42-call4.sh: the session's final checks. moe.ptx made from the final moe.cu ($OUT);
# on it: TestMoERouting (mmv_route_q4_k with EMBER_CUDA_ROUTE_FUSE, moe_topk's two
# experts a lane), the Q4_K mat-vec conformance, deepseek2's CUDA tests and the deepseek2
# goldens on the GPU; then tg128 of 8B Q4_K_M and V2-Lite (three each) and 64 streams of
# each (one). bin/dev: TESTS="cuda archs deepseek2"; testdata/golden's deepseek2 files.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s42c4}"
sh build/ptx-copy.sh /tmp/px moe || el "PTX FAILED"
cp /tmp/px/moe.ptx "$L/"
el "ptx done"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMoERouting|TestConformance/MatMul/Q4_K|TestArgMax' 200
(cd inference/model/deepseek2 && timeout -s KILL 250 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3 | sed 's/^/deepseek2: /') &
(cd inference/model/archs && timeout -s KILL 250 "$R/bin/dev/archs.test" -test.v -test.run 'TestGoldensCUDA$/deepseek2' 2>&1 | grep -E -- '^(--- |    --- |ok|FAIL|PASS)' | tail -8 | sed 's/^/archs: /') &
wait
el "tests done"
wait # the models
b() { q $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$1.gguf; }
for r in 1 2 3; do el "tg128: 8B $(b q4) V2-Lite $(b v2)"; done
el "64 streams: 8B $(s $E bench -backend cuda -streams 64 -p 512 -n 128 -m /tmp/q4.gguf) V2-Lite $(s $E bench -backend cuda -streams 64 -p 512 -n 128 -m /tmp/v2.gguf)"
