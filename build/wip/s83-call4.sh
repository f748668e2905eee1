# s83-call4.sh: attention_split1's K rows through a shared-memory ring (session 83).
# Prepare: TESTS=cuda sh build/dev-build.sh; hold testdata's golden, vocab and
# tokenizers out; carry bin/dev. Makes attention_split.ptx (returned), runs the split,
# fused-attention and conformance tests on it, then the 8B Q4_K_M's tg128 after 16,384
# and 32,768 tokens: committed, new, new without the ring.
set -u
MODELS="q4" . build/gpu-setup.sh "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
sh build/ptx-copy.sh /tmp/px attention_split || { el "PTX failed"; cat /tmp/px/attention_split.log | tail; exit 1; }
cp /tmp/px/attention_split.ptx "$OUT/"
el "ptx made"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestFusedAttentionQ8K|TestSplit|TestKernelNamesExist|TestAttentionChoice|TestDec1' 150
tgroup 1 'Conformance' 150
while pgrep -f 'cuda.test' >/dev/null; do sleep 2; done
sleep 1
unset EMBER_CUDA_PTX_DIR
el "tests done"
while [ ! -s /tmp/q4.gguf ] || pgrep -f "ember synth" >/dev/null; do sleep 2; done
tg() { timeout -s KILL 90 env "$@" bench -m /tmp/q4.gguf -backend cuda -p 0 -n 128 -d $d -r 1 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' '; }
for d in 16384 32768; do
	for r in 1 2; do
		el "d$d round $r: committed $(tg "$E") new $(tg EMBER_CUDA_PTX_DIR=/tmp/px "$E") no_ring $(tg EMBER_CUDA_PTX_DIR=/tmp/px EMBER_CUDA_NO_SPLIT_RING=1 "$E")"
	done
done
el done
