# s86-call3.sh: s86-call2.sh cut to what ~240 s of device time holds: the new
# attention_split1.ptx first (returned), the split, tensor-core, fused and conformance
# tests on it in parallel, then 8B tg128 at 32,768 and 16,384 (HEAD's PTX against the new)
# and the 1B's split1 against _1l at 8,192; each line also into $OUT/log.txt.
set -u
MODELS="q4" . build/gpu-setup.sh "$OUT"
$E synth /tmp/b1.gguf -preset llama3.2-1b -ftype q4_k_m >/dev/null 2>&1 &
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/log.txt"
sh build/ptx-copy.sh /tmp/px attention_split1 || { el "PTX failed"; tail /tmp/px/attention_split1.log; exit 1; }
cp /tmp/px/attention_split1.ptx "$OUT/"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "ptx made"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestSplit1TC' 170
tgroup 1 'TestSplitAttention|TestKernelNamesExist|TestAttentionChoice|TestSplit1Plan' 170
tgroup 2 'TestFusedAttentionQ8K|TestConformanceLongContextKernels' 170
while pgrep -f 'cuda.test' >/dev/null; do sleep 2; done
sleep 1
for g in 0 1 2; do lg "g$g: $(grep -E -c -- '^--- PASS' /tmp/g$g.log) pass, $(grep -E -c -- '--- FAIL' /tmp/g$g.log) fail; $(grep -E -- '^(=== RUN|--- )' /tmp/g$g.log | tail -1)"; done
grep -E 'values differ|tensor cores' /tmp/g0.log | head -3 | tee -a "$OUT/log.txt"
grep -E -- '--- FAIL|_test.go' /tmp/g1.log /tmp/g2.log | head -10 | tee -a "$OUT/log.txt"
cp /tmp/g0.log /tmp/g1.log /tmp/g2.log "$OUT/" 2>/dev/null
unset EMBER_CUDA_PTX_DIR
N=/tmp/px
while [ ! -s /tmp/q4.gguf ] || pgrep -f "ember synth" >/dev/null; do sleep 2; done
tg() { timeout -s KILL 90 env "$@" bench -m $M -backend cuda -p 0 -n 128 -d $d -r 1 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' '; }
M=/tmp/q4.gguf
for d in 32768 16384; do lg "8B d$d: head $(tg "$E") new $(tg EMBER_CUDA_PTX_DIR=$N "$E")"; done
M=/tmp/b1.gguf
for d in 8192 32768; do lg "1B d$d: default $(tg EMBER_CUDA_PTX_DIR=$N "$E") split1 $(tg EMBER_CUDA_PTX_DIR=$N EMBER_CUDA_NO_DEC1L=1 "$E") head $(tg "$E")"; done
M=/tmp/q4.gguf
for d in 32768 16384; do lg "8B d$d: head $(tg "$E") new $(tg EMBER_CUDA_PTX_DIR=$N "$E")"; done
lg done
