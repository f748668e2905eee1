# s90-call5.sh (session 90; ~80 s on a fresh machine): the two targets' tg128 on whatever
# card comes (H200 wanted), -r 3 each, cubins (the default).
set -u
MODELS="q4 v2" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader)"
while pgrep -f "ember synth" >/dev/null; do sleep 1; done
lg "8B tg128 -r 3 $(q "$E" bench -m /tmp/q4.gguf -backend cuda -p 0 -n 128 -r 3)"
lg "V2-Lite tg128 -r 3 $(q "$E" bench -m /tmp/v2.gguf -backend cuda -p 0 -n 128 -r 3)"
lg "load: $("$E" bench -m /tmp/q4.gguf -backend cuda -p 0 -n 1 -r 1 2>&1 | grep '^load')"
lg done
