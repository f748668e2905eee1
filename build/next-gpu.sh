#!/bin/sh
# next-gpu.sh: session 26's last GPU call. The default carveout is 44 per cent for
# Q8_0's batch-1 mat-vecs only (carveout.go). Two rounds of 8B Q8_0 tg128 with it and
# with the driver's choice for every kernel (EMBER_CUDA_CARVEOUT=off); Q4_K_M and
# DeepSeek-V2-Lite tg128 once (no kernel of theirs takes the carveout); then where a
# V2-Lite batch-1 step goes, kernel by kernel, in launch order (build/profile-cuda.sh;
# kernels.csv and summary.txt come back in $OUT/v2prof). ~5 minutes.
# Carry bin/dev (build/dev-build.sh).
set -u
. build/gpu-setup.sh /tmp/next-gpu
wait
for r in 1 2; do
	echo "carve=default 8B q8_0 tg128 $(q "$E" bench -backend cuda -m /tmp/q8.gguf -p 0 -n 128 -r 3)"
	echo "carve=off 8B q8_0 tg128 $(EMBER_CUDA_CARVEOUT=off q "$E" bench -backend cuda -m /tmp/q8.gguf -p 0 -n 128 -r 3)"
done
echo "8B q4_k_m tg128 $(q "$E" bench -backend cuda -m /tmp/q4.gguf -p 0 -n 128 -r 3)"
echo "v2 tg128 $(q "$E" bench -backend cuda -m /tmp/v2.gguf -p 0 -n 128 -r 3)"
echo "greedy q8 (a0f79f57c7154598541d0a928c172ed5 before) $("$E" run -backend cuda -m /tmp/q8.gguf -p "The quick brown fox" -n 48 -temp 0 2>/dev/null | md5sum)"
timeout -s KILL 200 sh build/profile-cuda.sh "$E" /tmp/v2.gguf "$L/v2prof" -p 0 -n 32 -r 1 >/dev/null 2>&1; echo "profile rc $?"
head -40 "$L/v2prof/summary.txt"
