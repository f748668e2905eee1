# s98-call1.sh (session 98): the two targets' tg128 (-r 3) on HEAD's embedded kernels on
# whatever card came (the last H200 figures are session 91's), and V2-Lite Q5_K_M's.
# Before it: TESTS=" " sh build/dev-build.sh; the plain hold-out; carry bin/dev.
set -u
MODELS="q4 v2 v5" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
while pgrep -f "ember synth" >/dev/null; do sleep 1; done
lg "8B tg128 -r 3 $(q "$E" bench -m /tmp/q4.gguf -backend cuda -p 0 -n 128 -r 3)"
lg "V2-Lite tg128 -r 3 $(q "$E" bench -m /tmp/v2.gguf -backend cuda -p 0 -n 128 -r 3)"
lg "V2-Lite Q5_K_M tg128 -r 3 $(q "$E" bench -m /tmp/v5.gguf -backend cuda -p 0 -n 128 -r 3)"
lg done
