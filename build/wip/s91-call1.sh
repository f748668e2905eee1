# s91-call1.sh (session 91): build/micro/mvp.cu's NORM=9 (mvg.cuh: the norm's and
# SwiGLU's work as per-group tails of the products before them, no kernel of their own)
# against the engine's chain, at gaps 0 and 3000 ns in the attention place; then the two
# targets' tg128 (-r 3) on whatever card came. ~5 minutes on a fresh machine.
set -u
MODELS="q4 v2" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader)"
(cd build/micro && nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/mvp mvp.cu 2>&1 | grep -i error)
lg "mvp built"
for g in 0 3000; do
	NORM=9 GAP=$g timeout 150 /tmp/mvp 2>&1 | tee -a "$OUT/log.txt"
done
lg "micro done"
while pgrep -f "ember synth" >/dev/null; do sleep 1; done
lg "8B tg128 -r 3 $(q "$E" bench -m /tmp/q4.gguf -backend cuda -p 0 -n 128 -r 3)"
lg "V2-Lite tg128 -r 3 $(q "$E" bench -m /tmp/v2.gguf -backend cuda -p 0 -n 128 -r 3)"
lg done
