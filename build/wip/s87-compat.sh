# s87-compat.sh: the compatibility PTX (kernels/cuda/sm80: compute capability 8.x, A100 and
# RTX 30/40) on a Hopper GPU, which JIT-compiles it as an RTX card's driver would:
# EMBER_CUDA_COMPAT=1 loads it and switches off the Hopper-only kernels (compat.go), and
# EMBER_CUDA_SMEM_LIMIT=101376 holds every block to an RTX 40's 99 KiB of shared memory
# (an A100 has 163 KiB: the second pass runs with Hopper's). Prepare here: TESTS="cuda
# deepseek2" sh build/dev-build.sh; hold testdata's golden, vocab and tokenizers out; carry
# bin/dev. Logs into $OUT/log.txt as it goes; cuda.test's logs to $OUT.
set -u
MODELS="q4 v2" . build/gpu-setup.sh "$OUT"
$E synth /tmp/b1.gguf -preset llama3.2-1b -ftype q4_k_m >/dev/null 2>&1 &
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
dstests() { (cd inference/model/deepseek2 && timeout -s KILL "$1" "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3 | sed 's/^/deepseek2: /') & }
for lim in 101376 ""; do
	export EMBER_CUDA_COMPAT=1 EMBER_CUDA_SMEM_LIMIT=$lim
	[ -z "$lim" ] && unset EMBER_CUDA_SMEM_LIMIT
	tgroup 0 'Conformance' 240
	tgroup 1 'TestSampleAhead|TestFeeder|TestArgMax|TestTopK|TestMatVec|TestMatMul|TestMMQ|TestMoE|TestRouted|TestFused|TestGraph' 240
	tgroup 2 'TestAttention|TestSplit|TestDecode|TestPrefill|TestShort|TestLatent|TestMLA' 240
	dstests 240
	wait
	for g in 0 1 2; do
		lg "limit ${lim:-none} g$g: $(grep -E -c -- '^--- PASS' /tmp/g$g.log) pass, $(grep -E -c -- '--- FAIL' /tmp/g$g.log) fail; $(grep -E -- '^(=== RUN|--- )' /tmp/g$g.log | tail -1)"
		grep -E -B2 -A6 -- '--- FAIL|panic' /tmp/g$g.log | head -40 >>"$OUT/log.txt"
		cp /tmp/g$g.log "$OUT/lim${lim:-none}-g$g.log"
	done
done
unset EMBER_CUDA_COMPAT EMBER_CUDA_SMEM_LIMIT
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
