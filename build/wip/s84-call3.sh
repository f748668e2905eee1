# s84-call3.sh: session 84's final attention_split.ptx (the V ring; embedded) under the
# attention tests; 8B Q4_K_M tg128 after 6,144 / 8,192 / 12,288 tokens with
# attention_decD_1l up to eight tiles (EMBER_CUDA_DEC1L_TILES=8: the old choice) against
# the new default (four for 128-dim heads: split1 past 8,192); then ncu's detail of one
# attention_split1 launch after 32,768 tokens (build/profile-cuda.sh). Prepare:
# TESTS=cuda sh build/dev-build.sh; hold testdata's golden, vocab and tokenizers out;
# carry bin/dev.
set -u
MODELS="q4" . build/gpu-setup.sh "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
tgroup 0 'TestFusedAttentionQ8K' 230
tgroup 1 'TestSplit|TestKernelNamesExist|TestAttentionChoice|TestDec1' 230
tgroup 2 'Conformance' 230
while pgrep -f 'cuda.test' >/dev/null; do sleep 2; done
sleep 1
el "tests done"
while [ ! -s /tmp/q4.gguf ] || pgrep -f "ember synth" >/dev/null; do sleep 2; done
tg() { timeout -s KILL 90 env "$@" bench -m /tmp/q4.gguf -backend cuda -p 0 -n 128 -d $d -r 1 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' '; }
for d in 6144 8192 12288; do
	for r in 1 2; do
		el "d$d round $r: tiles8 $(tg EMBER_CUDA_DEC1L_TILES=8 "$E") new $(tg "$E")"
	done
done
PACK=1 DETAIL=attention_split1 timeout -s KILL 200 sh build/profile-cuda.sh "$E" /tmp/q4.gguf "$OUT/prof" -p 0 -n 24 -d 32768 -r 1 >/tmp/prof.log 2>&1
el "profile rc $?"
grep -E 'attention_split1|total' "$OUT/prof/summary.txt" | head -5
grep -E 'Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers|Stall|Warp Cycles|Issued Ipc|No Eligible|Active Warps|One or More' /tmp/prof.log | head -30
el done
