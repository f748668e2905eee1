# s84-call4.sh: attention_split1 with fewer instructions (build/wip/split-trim.patch: the
# query's floats in 16-byte loads, no divisions in the ring's copies or the
# probabilities; the same bits; session 84, written, not run: no machine came). Prepare:
# git apply build/wip/split-trim.patch; TESTS=cuda sh build/dev-build.sh; hold testdata's
# golden, vocab and tokenizers out; carry bin/dev. Makes attention_split.ptx (returned);
# 8B Q4_K_M tg128 after 32,768 and 16,384 tokens, committed (embedded) against new; then
# the attention tests on the new PTX (land the PTX if they pass and it gains).
set -u
MODELS="q4" . build/gpu-setup.sh "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
sh build/ptx-copy.sh /tmp/px attention_split || { el "PTX failed"; exit 1; }
cp /tmp/px/attention_split.ptx "$OUT/"
same_bodies /tmp/px attention_split
el "ptx made"
while [ ! -s /tmp/q4.gguf ] || pgrep -f "ember synth" >/dev/null; do sleep 2; done
tg() { timeout -s KILL 90 env "$@" bench -m /tmp/q4.gguf -backend cuda -p 0 -n 128 -d $d -r 1 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' '; }
for d in 32768 16384; do
	el "d$d: committed $(tg "$E") new $(tg EMBER_CUDA_PTX_DIR=/tmp/px "$E")"
done
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestFusedAttentionQ8K' 170
tgroup 1 'TestSplit|TestKernelNamesExist|TestAttentionChoice|TestDec1' 170
tgroup 2 'Conformance' 170
while pgrep -f 'cuda.test' >/dev/null; do sleep 2; done
sleep 1
el "tests done"
