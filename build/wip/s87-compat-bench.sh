# s87-compat-bench.sh: after s87-compat.sh on the same machine (its models written):
# pp512 and tg128 of the 8B, V2-Lite and 1B Q4_K_M on Hopper's kernels, on the
# compatibility kernels (EMBER_CUDA_COMPAT=1) and on those held to 99 KiB a block, one
# run each, two rounds; stories260K's greedy tokens at 99 KiB against the CPU's. ~250 s.
set -u
MODELS="q4 v2" . build/gpu-setup.sh "$OUT"
[ -s /tmp/b1.gguf ] || $E synth /tmp/b1.gguf -preset llama3.2-1b -ftype q4_k_m >/dev/null 2>&1
lg() { el "$*" | tee -a "$OUT/log.txt"; }
while pgrep -f "ember synth" >/dev/null; do sleep 2; done
C="env EMBER_CUDA_COMPAT=1"
K="env EMBER_CUDA_COMPAT=1 EMBER_CUDA_SMEM_LIMIT=101376"
for M in /tmp/q4.gguf /tmp/v2.gguf /tmp/b1.gguf; do
	for r in 1 2; do
		lg "$(basename $M) pp512/tg128 hopper $(p $E bench -m $M -backend cuda -p 512 -n 128 -r 1) compat $(p $C $E bench -m $M -backend cuda -p 512 -n 128 -r 1) compat99K $(p $K $E bench -m $M -backend cuda -p 512 -n 128 -r 1)"
	done
done
lg "greedy stories260K compat99K: $($K $E run -backend cuda -temp 0 -n 32 -p 'Once upon a time' 2>&1 | tail -2 | tr '\n' ' ')"
lg "greedy stories260K cpu:       $($E run -backend cpu -temp 0 -n 32 -p 'Once upon a time' 2>&1 | tail -2 | tr '\n' ' ')"
lg done
