# s85-call2.sh: attention_split1 on the tensor cores (session 85: SPLIT_TC; scores as
# m16n8k16 products of 16 K rows by the group's query, p * V of the V rows by the
# probabilities; written, not run: no machine came). Prepare: sh
# build/wip/split-tc-prepare.sh; hold testdata's golden, vocab and tokenizers out; carry
# bin/dev and bin/llamacpp-src.tar.xz (~480 s of device time; with less, drop llama.cpp
# and the H200 figures at the end, or the fused and conformance group). Builds llama-bench
# in the background; makes attention_split.ptx and attention_split1.ptx (returned;
# attention_split1 now its own module); runs TestSplit1TC, the split, fused and
# conformance tests on it; 8B Q4_K_M tg128 at depth with the tensor-core form against
# EMBER_CUDA_NO_SPLIT_TC (both the new PTX), and at 4,096 / 8,192 split1 in place of
# attention_decD_1l (EMBER_CUDA_NO_DEC1L); llama-bench's tg128 at the same depths.
set -u
MODELS="q4 v2" . build/gpu-setup.sh "$OUT"
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader)
echo "$GPU"
llama_bg
sh build/ptx-copy.sh /tmp/px attention_split attention_split1 || { el "PTX failed"; tail /tmp/px/attention_split.log; exit 1; }
cp /tmp/px/attention_split.ptx /tmp/px/attention_split1.ptx "$OUT/"
el "ptx made"
same_bodies /tmp/px attention_split attention_split1
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestSplit1TC' 170
tgroup 1 'TestSplitAttention|TestKernelNamesExist|TestAttentionChoice' 170
tgroup 2 'TestFusedAttentionQ8K|TestConformanceLongContextKernels' 170
while pgrep -f 'cuda.test' >/dev/null; do sleep 2; done
sleep 1
grep -E 'values differ' /tmp/g0.log
cp /tmp/g0.log /tmp/g1.log /tmp/g2.log "$L/" 2>/dev/null
el "tests done"
while [ ! -s /tmp/q4.gguf ] || pgrep -f "ember synth" >/dev/null; do sleep 2; done
tg() { timeout -s KILL 90 env "$@" bench -m /tmp/q4.gguf -backend cuda -p 0 -n 128 -d $d -r 1 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' '; }
for d in 32768 16384 12288 32768 16384; do
	el "d$d: tc $(tg "$E") simt $(tg EMBER_CUDA_NO_SPLIT_TC=1 "$E")"
done
for d in 4096 8192; do
	el "d$d: default $(tg "$E") split1-tc $(tg EMBER_CUDA_NO_DEC1L=1 "$E") split1-simt $(tg EMBER_CUDA_NO_DEC1L=1 EMBER_CUDA_NO_SPLIT_TC=1 "$E")"
done
[ -n "$LB" ] && wait $LB
llama_tg q4 4096,8192,16384,32768
case $GPU in *H200*)
	d=0
	el "H200 8B tg128: $(tg "$E") $(tg "$E") $(tg "$E")"
	while [ ! -s /tmp/v2.gguf ] || pgrep -f "ember synth" >/dev/null; do sleep 2; done
	el "H200 V2-Lite tg128: $(timeout -s KILL 90 "$E" bench -m /tmp/v2.gguf -backend cuda -p 0 -n 128 -r 3 2>&1 | grep '^| ' | tail -1)"
	;;
esac
el done
