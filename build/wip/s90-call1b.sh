# s90-call1b.sh (session 90; ~300 s on a fresh machine): s90-call1.sh cut for short device
# time: TestCubinsLoad, the conformance/attention/fused tests and deepseek2's CUDA tests on
# the cubins, 8B Q4_K_M tg128 cubin against PTX, V2-Lite Q4_K_M tg128, one round each
# (-r 3 for the cubin sides).
set -u
MODELS="q4 v2" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader)"
(cd inference/backend/cuda && timeout -s KILL 120 "$R/bin/dev/cuda.test" -test.v -test.run 'TestCubinsLoad' 2>&1 | grep -E -- '---|cubin_gpu_test' | tee -a "$OUT/log.txt")
lg "load test done; $("$E" bench -backend cuda -p 0 -n 1 -r 1 2>&1 | grep "^load")"
tgroup 0 'TestConformance|TestKernelNamesExist|TestEmbeddedKernelsWait|TestSplit|TestFused' 120
(cd inference/model/deepseek2 && timeout -s KILL 100 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -2 | sed 's/^/deepseek2: /' | tee -a "$OUT/log.txt") &
wait
gsum subset 0
while pgrep -f "ember synth" >/dev/null; do sleep 2; done
lg "8B tg128 cubin -r 3 $(q "$E" bench -m /tmp/q4.gguf -backend cuda -p 0 -n 128 -r 3) ptx $(q env EMBER_CUDA_CUBIN=0 "$E" bench -m /tmp/q4.gguf -backend cuda -p 0 -n 128 -r 1)"
lg "V2-Lite tg128 -r 3 $(q "$E" bench -m /tmp/v2.gguf -backend cuda -p 0 -n 128 -r 3)"
lg done
