# s83-call3.sh: attention_tc's one pass from 512 keys, and attention_mla2's test with
# its bound from sum p |v| (session 83). Prepare: TESTS="cuda engine" sh
# build/dev-build.sh; hold testdata's golden, vocab and tokenizers out; carry bin/dev.
# Makes attention_tc.ptx (returned) and attention_mla2.ptx, runs the attention,
# conformance and engine CUDA tests on them, then the 8B's pp512 at depths 0, 1,024 and
# 4,096, committed against new.
set -u
MODELS="q4" . build/gpu-setup.sh "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
sh build/ptx-copy.sh /tmp/px attention_tc attention_mla2 || { el "PTX failed"; exit 1; }
cp /tmp/px/attention_tc.ptx /tmp/px/attention_mla2.ptx "$OUT/"
el "ptx made"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestPrefillOnePass|TestAttentionMLA2|TestKernelNamesExist|TestPrefill|TestAttention' 200
tgroup 1 'Conformance' 200
(cd inference/engine && timeout -s KILL 200 "$R/bin/dev/engine.test" -test.v -test.run 'CUDA' >/tmp/eng.log 2>&1; echo "engine rc $?: $(grep -c -- '^--- PASS' /tmp/eng.log) pass, $(grep -c -- '--- FAIL' /tmp/eng.log) fail"; grep -A5 -- '--- FAIL' /tmp/eng.log | head -20) &
while pgrep -f 'cuda.test|engine.test' >/dev/null; do sleep 2; done
sleep 1
grep -E 'largest|FAIL' /tmp/g0.log | head -20
unset EMBER_CUDA_PTX_DIR
el "tests done"
while [ ! -s /tmp/q4.gguf ] || pgrep -f "ember synth" >/dev/null; do sleep 2; done
pp() { timeout -s KILL 90 env "$@" bench -m /tmp/q4.gguf -backend cuda -p 512 -n 0 -d $d -r 2 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' '; }
for r in 1 2; do
	for d in 0 1024 4096; do
		el "d$d round $r: committed $(pp "$E") new $(pp EMBER_CUDA_PTX_DIR=/tmp/px "$E")"
	done
done
el done
