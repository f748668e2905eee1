#!/bin/sh
# final-gpu.sh: session 26's last check of the final build (its embedded PTX): the
# branch, fusion-free MoE and golden tests, then 8B Q8_0 tg128 (Q8_0's mat-vecs at the
# default carveout) and DeepSeek-V2-Lite tg128 with and without the pinned rounding.
# ~4 minutes. Carry bin/dev (build/dev-build.sh).
set -u
MODELS="q8 v2"
. build/gpu-setup.sh /tmp/final-gpu
(cd inference/backend/cuda && timeout -s KILL 120 "$R/bin/dev/cuda.test" -test.run 'TestBranchedGraph|TestMatVecBatch1' >"$L/tests.log" 2>&1; echo "cuda tests rc $?") &
(cd inference/model/deepseek2 && timeout -s KILL 120 "$R/bin/dev/deepseek2.test" >"$L/ds2.log" 2>&1; echo "deepseek2 tests rc $?") &
(cd inference/model/archs && timeout -s KILL 120 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA' >"$L/goldens.log" 2>&1; echo "goldens rc $?") &
wait
grep -E "^--- FAIL|^ok|^PASS|^FAIL|panic" "$L"/*.log | head -20
echo "8B q8_0 tg128 $(q "$E" bench -backend cuda -m /tmp/q8.gguf -p 0 -n 128 -r 3)"
echo "v2 tg128 $(q "$E" bench -backend cuda -m /tmp/v2.gguf -p 0 -n 128 -r 3)"
echo "v2 tg128 no pin $(EMBER_CUDA_NO_PIN=1 q "$E" bench -backend cuda -m /tmp/v2.gguf -p 0 -n 128 -r 3)"
