# s89-call3.sh (session 89; ~260 s on a fresh machine): the embedded sm_90 cubins
# (kernels/cuda/sm90). TestCubinsLoad (every module from machine code, the same PDL
# kernels as the PTX, both starts timed: the second compiles the PTX), then the
# conformance and deepseek2 CUDA tests on the cubins (the default), then 8B Q4_K_M tg128
# from the cubins against the PTX (EMBER_CUDA_CUBIN=0), two rounds.
set -u
MODELS="q4" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name --format=csv,noheader)"
(cd inference/backend/cuda && timeout -s KILL 150 "$R/bin/dev/cuda.test" -test.v -test.run 'TestCubinsLoad' 2>&1 | grep -E -- '---|cubin_gpu_test' | tee -a "$OUT/log.txt")
lg "load test done; $("$E" bench -backend cuda -p 0 -n 1 -r 1 2>&1 | grep "^load")"
tgroup 0 'TestConformance$|TestKernelNamesExist|TestEmbeddedKernelsWait' 100
(cd inference/model/deepseek2 && timeout -s KILL 100 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -2 | sed 's/^/deepseek2: /' | tee -a "$OUT/log.txt") &
wait
lg "g0: $(grep -E -c -- '^--- PASS' /tmp/g0.log) pass, $(grep -E -c -- '--- FAIL' /tmp/g0.log) fail; $(grep -E -- '^(=== RUN|--- )' /tmp/g0.log | tail -1)"
while pgrep -f "ember synth" >/dev/null; do sleep 2; done
for r in 1 2; do lg "8B tg128 cubin $(q "$E" bench -m /tmp/q4.gguf -backend cuda -p 0 -n 128 -r 1) ptx $(q env EMBER_CUDA_CUBIN=0 "$E" bench -m /tmp/q4.gguf -backend cuda -p 0 -n 128 -r 1)"; done
lg done
