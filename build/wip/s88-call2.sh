# s88-call2.sh: after s88-call1.sh on the same machine. The compatibility PTX's tests at
# Hopper's shared memory limit (what an A100's 163 KiB allows is between: the 99 KiB
# pass was call 1's), then pp512/tg128 of the 8B, V2-Lite and 1B Q4_K_M on Hopper's
# kernels, the compatibility kernels and those held to 99 KiB a block (one run each, two
# rounds), and the bundled stories260K's greedy tokens at 99 KiB against the CPU's.
set -u
MODELS="q4 v2" . build/gpu-setup.sh "$OUT"
[ -s /tmp/b1.gguf ] || $E synth /tmp/b1.gguf -preset llama3.2-1b -ftype q4_k_m >/dev/null 2>&1 &
lg() { el "$*" | tee -a "$OUT/log.txt"; }
export EMBER_CUDA_COMPAT=1
tgroup 3 'Conformance' 200; P3=$!
tgroup 4 'TestSampleAhead|TestFeeder|TestArgMax|TestTopK|TestMatVec|TestMatMul|TestMMQ|TestMoE|TestRouted|TestFused|TestGraph' 200; P4=$!
tgroup 5 'TestAttention|TestSplit|TestDecode|TestPrefill|TestShort|TestLatent|TestMLA' 200; P5=$!
(cd inference/model/deepseek2 && timeout -s KILL 200 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' >/tmp/dsH.log 2>&1; echo "deepseek2 rc $?" >>/tmp/dsH.log) & P6=$!
unset EMBER_CUDA_COMPAT
wait $P3 $P4 $P5 $P6
for g in 3 4 5; do
	lg "compat, Hopper's limit g$g: $(grep -E -c -- '^--- PASS' /tmp/g$g.log) pass, $(grep -E -c -- '--- FAIL' /tmp/g$g.log) fail; $(grep -E -- '^(=== RUN|--- )' /tmp/g$g.log | tail -1)"
	grep -E -B2 -A6 -- '--- FAIL|panic' /tmp/g$g.log | head -30 >>"$OUT/log.txt"
	cp /tmp/g$g.log "$OUT/H-g$g.log"
done
lg "deepseek2 compat: $(tail -3 /tmp/dsH.log | tr '\n' ' ')"
while [ ! -s /tmp/q4.gguf ] || [ ! -s /tmp/v2.gguf ] || [ ! -s /tmp/b1.gguf ] || pgrep -f "ember synth" >/dev/null; do sleep 2; done
C="env EMBER_CUDA_COMPAT=1"
K="env EMBER_CUDA_COMPAT=1 EMBER_CUDA_SMEM_LIMIT=101376"
for r in 1 2; do
	for M in /tmp/q4.gguf /tmp/v2.gguf /tmp/b1.gguf; do
		lg "$(basename $M) pp512/tg128 hopper $(p $E bench -m $M -backend cuda -p 512 -n 128 -r 1) compat $(p $C $E bench -m $M -backend cuda -p 512 -n 128 -r 1) compat99K $(p $K $E bench -m $M -backend cuda -p 512 -n 128 -r 1)"
	done
done
lg "greedy stories260K compat99K: $($K $E run -backend cuda -temp 0 -n 32 -p 'Once upon a time' 2>/dev/null | tail -2 | tr '\n' ' ')"
lg "greedy stories260K cpu:       $($E run -backend cpu -temp 0 -n 32 -p 'Once upon a time' 2>/dev/null | tail -2 | tr '\n' ' ')"
lg done
