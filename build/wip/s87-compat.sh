# s87-compat.sh: the compatibility PTX (kernels/cuda/sm80: compute capability 8.x, A100 and
# RTX 30/40) on a Hopper GPU, which JIT-compiles it as an RTX card's driver would:
# EMBER_CUDA_COMPAT=1 loads it and switches off the Hopper-only kernels (compat.go), and
# EMBER_CUDA_SMEM_LIMIT=101376 holds every block to an RTX 40's 99 KiB of shared memory
# (an A100 has 163 KiB: the second pass runs with Hopper's). Prepare here: TESTS="cuda
# deepseek2" sh build/dev-build.sh; hold testdata's golden, vocab and tokenizers out; carry
# bin/dev. Logs into $OUT/log.txt as it goes; cuda.test's logs to $OUT. ~500 s; the
# timings are s87-compat-bench.sh's (a second call on the same machine).
set -u
MODELS="q4 v2" . build/gpu-setup.sh "$OUT"
$E synth /tmp/b1.gguf -preset llama3.2-1b -ftype q4_k_m >/dev/null 2>&1 &
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
dstests() { (cd inference/model/deepseek2 && timeout -s KILL "$1" "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3 | sed 's/^/deepseek2: /') & }
for lim in 101376 ""; do # an RTX 30/40's limit, then Hopper's (an A100 has 163 KiB)
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
lg "tests done; the timings: build/wip/s87-compat-bench.sh"
