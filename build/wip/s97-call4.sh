# s97-call4.sh (session 97): where a decode step's warps wait for instructions. Nsight
# Compute's WarpStateStats (each kernel alone, caches flushed: its code cold, as after a
# layer's weight stream in the chain) for two decode steps of V2-Lite Q4_K_M and of the
# 8B Q4_K_M, raw page as CSV (per launch: duration, instructions executed, each stall
# reason's warps per issue), to rank the chain's kernels by stall_no_instruction (cold
# instruction fetch: ifetch.cu's ~0.9 ns an instruction) against their duration.
# Before it: TESTS="cuda" sh build/dev-build.sh; the plain hold-out; carry bin/dev.
set -u
MODELS="v2 q4" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
lg "ncu: $NCU $($NCU --version | tail -1)"
while pgrep -f "ember synth" >/dev/null; do sleep 1; done
export EMBER_CUDA_CHUNK=0
for m in v2 q4; do
	n=$(EMBER_CUDA_STATS=1 "$E" bench -m /tmp/$m.gguf -backend cuda -p 0 -n 32 -r 1 2>&1 | sed -n 's/.* kernels in \([0-9]*\) batches.*/\1/p' | tail -1)
	a=$((n - 10)) b=$((n - 8))
	lg "$m: $n batches, profiling $a:$b"
	EMBER_CUDA_PROFILE_RANGE=$a:$b timeout -s KILL 200 "$NCU" --profile-from-start off --clock-control none \
		--section WarpStateStats --section LaunchStats --metrics gpu__time_duration.sum,smsp__inst_executed.sum,sm__warps_launched.sum \
		--csv --page raw "$E" bench -m /tmp/$m.gguf -backend cuda -p 0 -n 32 -r 1 >"$OUT/raw-$m.csv" 2>"/tmp/ncu-$m.err"
	lg "$m: rc $? $(wc -l <"$OUT/raw-$m.csv") lines; $(grep -c no_instruction "$OUT/raw-$m.csv") rows name no_instruction"
	tail -3 /tmp/ncu-$m.err | tee -a "$OUT/log.txt"
done
xz -9 "$OUT"/raw-*.csv
lg done
