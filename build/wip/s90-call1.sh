# s90-call1.sh (session 90): session 89's unrun call 3 (the embedded sm_90 cubins:
# TestCubinsLoad, then the whole backend suite and deepseek2's CUDA tests on the cubins,
# the default; a subset when device time is short), then the two targets' benches (8B Q4_K_M pp512/tg128 -r 3, tg128 cubin
# against PTX twice, V2-Lite Q4_K_M pp512/tg128 -r 3).
set -u
MODELS="q4 v2" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader)"
(cd inference/backend/cuda && timeout -s KILL 150 "$R/bin/dev/cuda.test" -test.v -test.run 'TestCubinsLoad' 2>&1 | grep -E -- '---|cubin_gpu_test' | tee -a "$OUT/log.txt")
lg "load test done; $("$E" bench -backend cuda -p 0 -n 1 -r 1 2>&1 | grep "^load")"
tgroup 0 'TestConformance|TestKernelNamesExist|TestEmbeddedKernelsWait|TestCubin|TestSplit|TestDecodeAttention|TestFused|TestMoE|TestMatVec' 200
(cd inference/model/deepseek2 && timeout -s KILL 150 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -2 | sed 's/^/deepseek2: /' | tee -a "$OUT/log.txt") &
wait
gsum all 0
cp /tmp/g0.log "$OUT/g0.log"
while pgrep -f "ember synth" >/dev/null; do sleep 2; done
lg "8B pp512/tg128 -r 3: $(p "$E" bench -m /tmp/q4.gguf -backend cuda -p 512 -n 128 -r 3)"
for r in 1 2; do lg "8B tg128 cubin $(q "$E" bench -m /tmp/q4.gguf -backend cuda -p 0 -n 128 -r 1) ptx $(q env EMBER_CUDA_CUBIN=0 "$E" bench -m /tmp/q4.gguf -backend cuda -p 0 -n 128 -r 1)"; done
"$E" bench -m /tmp/v2.gguf -backend cuda -p 512 -n 128 -r 3 2>&1 | grep -E '^(load|\| )' | tee -a "$OUT/log.txt"
lg done
