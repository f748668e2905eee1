# s86-call1.sh: attention_split1's ring copies find their blocks in shared memory (the
# chunk's part of the block table, read once; the table's loads of a stage issued
# together) in place of a global load per copy, serialized behind the previous copy.
# Prepare: TESTS=cuda sh build/dev-build.sh (embeds HEAD's PTX: the tensor-core split1);
# hold testdata's golden, vocab and tokenizers out; carry bin/dev. Makes
# attention_split1.ptx (returned), runs the split, fused and conformance tests on it;
# 8B Q4_K_M tg128 at depth, embedded PTX (old) against the new; split1 against _1l at
# 8,192; the 1B (64-dim heads) at depth: tc against simt, split1 against _1l; then ncu's
# detail of the new split1 after 32,768 tokens.
set -u
MODELS="q4" . build/gpu-setup.sh "$OUT"
$E synth /tmp/b1.gguf -preset llama3.2-1b -ftype q4_k_m >/dev/null 2>&1 &
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader)
echo "$GPU"
sh build/ptx-copy.sh /tmp/px attention_split1 || { el "PTX failed"; tail /tmp/px/attention_split1.log; exit 1; }
cp /tmp/px/attention_split1.ptx "$OUT/"
el "ptx made"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestSplit1TC' 170
tgroup 1 'TestSplitAttention|TestKernelNamesExist|TestAttentionChoice' 170
tgroup 2 'TestFusedAttentionQ8K|TestConformanceLongContextKernels' 170
while pgrep -f 'cuda.test' >/dev/null; do sleep 2; done
sleep 1
grep -E 'values differ' /tmp/g0.log
cp /tmp/g0.log /tmp/g1.log /tmp/g2.log "$L/" 2>/dev/null
el "tests done"
unset EMBER_CUDA_PTX_DIR
N=/tmp/px
while [ ! -s /tmp/q4.gguf ] || pgrep -f "ember synth" >/dev/null; do sleep 2; done
tg() { timeout -s KILL 90 env "$@" bench -m $M -backend cuda -p 0 -n 128 -d $d -r 1 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' '; }
M=/tmp/q4.gguf
for d in 32768 16384 12288 32768 16384; do
	el "8B d$d: old $(tg "$E") new $(tg EMBER_CUDA_PTX_DIR=$N "$E")"
done
for d in 8192 4096; do
	el "8B d$d: default $(tg EMBER_CUDA_PTX_DIR=$N "$E") split1 $(tg EMBER_CUDA_PTX_DIR=$N EMBER_CUDA_NO_DEC1L=1 "$E")"
done
M=/tmp/b1.gguf
for d in 32768 16384 8192; do
	el "1B d$d: default $(tg EMBER_CUDA_PTX_DIR=$N "$E") simt $(tg EMBER_CUDA_PTX_DIR=$N EMBER_CUDA_NO_SPLIT_TC=1 "$E") split1 $(tg EMBER_CUDA_PTX_DIR=$N EMBER_CUDA_NO_DEC1L=1 "$E") old $(tg "$E")"
done
EMBER_CUDA_PTX_DIR=$N PACK=1 DETAIL=attention_split1 timeout -s KILL 150 sh build/profile-cuda.sh "$E" /tmp/q4.gguf "$OUT/prof" -p 0 -n 24 -d 32768 -r 1 >/tmp/prof.log 2>&1
el "profile rc $?"
grep -E 'attention_split1|total' "$OUT/prof/summary.txt" | head -5
grep -E 'Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers|Stall|Warp Cycles|Issued Ipc|No Eligible|Active Warps|One or More' /tmp/prof.log | head -30
el done
