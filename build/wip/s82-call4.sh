# s82-call4.sh: where prompt time goes at depth (session 82): EMBER_CUDA_PROFILE (each
# launch synchronized, per-kernel totals at exit) for DeepSeek-V2-Lite and the 8B,
# pp512 after 16,384 positions (the untimed context's 32 batches of 512 included).
# Prepare: go build -tags nogui -o bin/dev/ember . (xz); hold testdata's golden, vocab and
# tokenizers out; carry bin/dev.
set -u
MODELS="v2 q4" . build/gpu-setup.sh "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
wait
for m in v2 q4; do
	el "$m"
	EMBER_CUDA_PROFILE=1 timeout -s KILL 150 "$E" bench -m /tmp/$m.gguf -backend cuda -p 512 -n 0 -d 16384 -r 1 2>&1 | grep -E '^\| |cuda profile|us/call' | head -24
done
el done
