#!/bin/sh
# s35-call6.sh: the session's end state on its embedded (committed) PTX: TestIDWBits and
# the kernel-name check, the CUDA goldens (archs.test -run CUDA: llama, qwen2 and
# deepseek2 against llama.cpp's logits), then the issues' figures: 8B Q4_K_M pp512 and
# tg128, 8B Q8_0 tg128, V2-Lite pp512 and tg128 (medians of 3), 64 streams of 512 + 128
# for 8B and V2-Lite. bin/dev built with TESTS="cuda archs". ~4 minutes.
set -u
export MODELS="q4 q8 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s35c6}"
unset EMBER_CUDA_PTX_DIR
tgroup 0 'TestIDWBits|TestKernelNamesExist|TestPTXMatchesSources' 150
(cd inference/model/archs && timeout -s KILL 200 "$R/bin/dev/archs.test" -test.v -test.run 'CUDA' 2>&1 | grep -E '^(--- |ok|FAIL|PASS)' | tail -8) &
wait
el tests done
el "8B Q4_K_M pp512|tg128: $(p "$E" bench -backend cuda -p 512 -n 128 -r 3 -m /tmp/q4.gguf)"
el "8B Q8_0 tg128: $(q "$E" bench -backend cuda -p 0 -n 128 -r 3 -m /tmp/q8.gguf)"
el "V2-Lite pp512|tg128: $(p "$E" bench -backend cuda -p 512 -n 128 -r 3 -m /tmp/v2.gguf)"
el "8B Q4_K_M tg128 again: $(q "$E" bench -backend cuda -p 0 -n 128 -r 3 -m /tmp/q4.gguf)"
el "8B 64 streams: $(s "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128)"
el "V2-Lite 64 streams: $(s "$E" bench -m /tmp/v2.gguf -backend cuda -streams 64 -p 512 -n 128)"
