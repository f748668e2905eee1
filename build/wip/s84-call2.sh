# s84-call2.sh: the attention kernels' block-table entries read once into shared memory
# (attention_split1, attention_decD_1l, attention_decD_1 / _1c; session 84). Prepare:
# TESTS=cuda sh build/dev-build.sh; hold testdata's golden, vocab and tokenizers out;
# carry bin/dev and bin/s84 (call 1's attention_split.ptx: the V ring without the table).
# Baseline /tmp/pb: the committed PTX but bin/s84's attention_split.ptx; new /tmp/px: the
# four modules made here. 8B Q4_K_M tg128 at depths 0 .. 32,768, the two alternating;
# then the attention tests on /tmp/px.
set -u
MODELS="q4" . build/gpu-setup.sh "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
sh build/ptx-copy.sh /tmp/px attention_split attention_long attention_dec attention_mla2 || { el "PTX failed"; exit 1; }
mkdir -p "$OUT/ptx" && for m in attention_split attention_long attention_dec attention_mla2; do cp /tmp/px/$m.ptx "$OUT/ptx/"; done
sh build/ptx-copy.sh /tmp/pb && cp bin/s84/attention_split.ptx /tmp/pb/
el "ptx made"
same_bodies /tmp/px attention_split attention_long attention_dec attention_mla2
while [ ! -s /tmp/q4.gguf ] || pgrep -f "ember synth" >/dev/null; do sleep 2; done
el "model ready"
tg() { timeout -s KILL 90 env "$@" bench -m /tmp/q4.gguf -backend cuda -p 0 -n 128 -d $d -r 1 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' '; }
for d in 0 1024 4096 8192 16384 32768; do
	for r in 1 2; do
		el "d$d round $r: base $(tg EMBER_CUDA_PTX_DIR=/tmp/pb "$E") new $(tg EMBER_CUDA_PTX_DIR=/tmp/px "$E")"
	done
done
d=0
el "d0 round 3: base $(tg EMBER_CUDA_PTX_DIR=/tmp/pb "$E") new $(tg EMBER_CUDA_PTX_DIR=/tmp/px "$E")"
for d in 2048 4096 8192; do
	el "d$d: new split1 (NO_DEC1L) $(tg EMBER_CUDA_PTX_DIR=/tmp/px EMBER_CUDA_NO_DEC1L=1 "$E") new $(tg EMBER_CUDA_PTX_DIR=/tmp/px "$E")"
done
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestFusedAttentionQ8K' 230
tgroup 1 'TestSplit|TestKernelNamesExist|TestAttentionChoice|TestDec1' 230
tgroup 2 'Conformance' 230
while pgrep -f 'cuda.test' >/dev/null; do sleep 2; done
sleep 1
el "tests done"
