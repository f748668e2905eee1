# s86-call2.sh: attention_split1's tensor-core form with one barrier a sub-chunk (the
# next copies issued after it), the chunk's statistics once after its scores, its p * V
# B fragments by float2 loads from padded rows (SPLIT_PAD), on top of call 1's table in
# shared memory (build/wip/px-stab: call 1's device PTX). Prepare: TESTS=cuda sh
# build/dev-build.sh (embeds HEAD's PTX); hold testdata's golden, vocab and tokenizers
# out; carry bin/dev. Makes attention_split1.ptx (returned), runs the split, fused and
# conformance tests on it; 8B Q4_K_M and 1B Q4_K_M tg128 at depth: HEAD's, call 1's and
# the new PTX; split1 against _1l on the 1B.
set -u
MODELS="q4" . build/gpu-setup.sh "$OUT"
$E synth /tmp/b1.gguf -preset llama3.2-1b -ftype q4_k_m >/dev/null 2>&1 &
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader)
echo "$GPU"
sh build/ptx-copy.sh /tmp/px attention_split1 || { el "PTX failed"; tail /tmp/px/attention_split1.log; exit 1; }
cp /tmp/px/attention_split1.ptx "$OUT/"
el "ptx made"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestSplit1TC' 230
tgroup 1 'TestSplitAttention|TestKernelNamesExist|TestAttentionChoice|TestSplit1Plan' 230
tgroup 2 'TestFusedAttentionQ8K|TestConformanceLongContextKernels' 230
while pgrep -f 'cuda.test' >/dev/null; do sleep 2; done
sleep 1
grep -E 'values differ|FAIL|got|want' /tmp/g0.log | head -5
grep -E -- '--- FAIL|Error|error' /tmp/g1.log /tmp/g2.log | head -10
cp /tmp/g0.log /tmp/g1.log /tmp/g2.log "$L/" 2>/dev/null
el "tests done"
unset EMBER_CUDA_PTX_DIR
N=/tmp/px S=$R/build/wip/px-stab
while [ ! -s /tmp/q4.gguf ] || pgrep -f "ember synth" >/dev/null; do sleep 2; done
tg() { timeout -s KILL 90 env "$@" bench -m $M -backend cuda -p 0 -n 128 -d $d -r 1 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' '; }
M=/tmp/q4.gguf
for d in 32768 16384 32768 16384; do
	el "8B d$d: head $(tg "$E") stab $(tg EMBER_CUDA_PTX_DIR=$S "$E") new $(tg EMBER_CUDA_PTX_DIR=$N "$E")"
done
M=/tmp/b1.gguf
for d in 32768 32768; do
	el "1B d$d: head $(tg "$E") stab $(tg EMBER_CUDA_PTX_DIR=$S "$E") new $(tg EMBER_CUDA_PTX_DIR=$N "$E")"
done
for d in 4096 8192 12288 16384 4096 8192 12288 16384; do
	el "1B d$d: default $(tg EMBER_CUDA_PTX_DIR=$N "$E") split1 $(tg EMBER_CUDA_PTX_DIR=$N EMBER_CUDA_NO_DEC1L=1 "$E") tiles4 $(tg EMBER_CUDA_PTX_DIR=$N EMBER_CUDA_DEC1L_TILES=4 "$E")"
done
M=/tmp/q4.gguf
d=8192
el "8B d$d: default $(tg EMBER_CUDA_PTX_DIR=$N "$E") split1 $(tg EMBER_CUDA_PTX_DIR=$N EMBER_CUDA_NO_DEC1L=1 "$E")"
el done
