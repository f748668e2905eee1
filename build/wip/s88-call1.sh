# s88-call1.sh: session 87's owed PTX and session 86's split-tc2 in one call, beside the
# compatibility tests at an RTX card's 99 KiB. (1) attention_dec, attention_short and
# sample_row made again on the device (their sources gained EM_SM90 guards; only their
# hash lines were set) and compared with the committed bodies, plus attention_split1 with
# build/wip/split-tc2.patch applied (the tree carried has it); all four returned. (2) the
# split, tensor-core, fused and conformance tests on that PTX; meanwhile the conformance,
# product, sampling, attention and deepseek2 tests on the compatibility PTX held to
# 101,376 bytes a block. (3) 8B tg128 at 32,768 and 16,384 (HEAD's PTX against the new)
# and the 1B's split1 against _1l at 8,192. Logs into $OUT/log.txt.
set -u
MODELS="q4" . build/gpu-setup.sh "$OUT"
$E synth /tmp/b1.gguf -preset llama3.2-1b -ftype q4_k_m >/dev/null 2>&1 &
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
export EMBER_CUDA_COMPAT=1 EMBER_CUDA_SMEM_LIMIT=101376
tgroup 3 'Conformance' 240; P3=$!
tgroup 4 'TestSampleAhead|TestFeeder|TestArgMax|TestTopK|TestMatVec|TestMatMul|TestMMQ|TestMoE|TestRouted|TestFused|TestGraph' 240; P4=$!
tgroup 5 'TestAttention|TestSplit|TestDecode|TestPrefill|TestShort|TestLatent|TestMLA' 240; P5=$!
(cd inference/model/deepseek2 && timeout -s KILL 240 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' >/tmp/ds99.log 2>&1; echo "deepseek2 99K rc $?" >>/tmp/ds99.log) & P6=$!
unset EMBER_CUDA_COMPAT EMBER_CUDA_SMEM_LIMIT
sh build/ptx-copy.sh /tmp/px attention_dec attention_short sample_row attention_split1 attention_split || lg "PTX FAILED"
cp /tmp/px/attention_split.ptx /tmp/px/attention_dec.ptx /tmp/px/attention_short.ptx /tmp/px/sample_row.ptx /tmp/px/attention_split1.ptx "$OUT/"
lg "ptx made; bodies that differ from the committed (split1 and split left out: split1 is split-tc2, split gained split_pv_meet):"
same_bodies /tmp/px attention_split1 attention_split | tee -a "$OUT/log.txt"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestSplit1TC' 170; P0=$!
tgroup 1 'TestSplitAttention|TestKernelNamesExist|TestAttentionChoice|TestSplit1Plan|TestEmbeddedKernelsWait' 170; P1=$!
tgroup 2 'TestFusedAttentionQ8K|TestConformanceLongContextKernels' 170; P2=$!
unset EMBER_CUDA_PTX_DIR
wait $P0 $P1 $P2 $P3 $P4 $P5 $P6
for g in 0 1 2 3 4 5; do
	lg "g$g: $(grep -E -c -- '^--- PASS' /tmp/g$g.log) pass, $(grep -E -c -- '--- FAIL' /tmp/g$g.log) fail; $(grep -E -- '^(=== RUN|--- )' /tmp/g$g.log | tail -1)"
	grep -E -B2 -A6 -- '--- FAIL|panic' /tmp/g$g.log | head -30 >>"$OUT/log.txt"
	cp /tmp/g$g.log "$OUT/"
done
grep -E 'values differ|tensor cores' /tmp/g0.log | head -3 | tee -a "$OUT/log.txt"
lg "deepseek2 at 99K: $(tail -3 /tmp/ds99.log | tr '\n' ' ')"
cp /tmp/ds99.log "$OUT/"
N=/tmp/px
while [ ! -s /tmp/q4.gguf ] || [ ! -s /tmp/b1.gguf ] || pgrep -f "ember synth" >/dev/null; do sleep 2; done
tg() { timeout -s KILL 90 env "$@" bench -m $M -backend cuda -p 0 -n 128 -d $d -r 1 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' '; }
M=/tmp/q4.gguf
for d in 32768 16384; do lg "8B d$d: head $(tg "$E") new $(tg EMBER_CUDA_PTX_DIR=$N "$E")"; done
M=/tmp/b1.gguf
d=8192; lg "1B d$d: default $(tg EMBER_CUDA_PTX_DIR=$N "$E") split1 $(tg EMBER_CUDA_PTX_DIR=$N EMBER_CUDA_NO_DEC1L=1 "$E") head $(tg "$E")"
M=/tmp/q4.gguf
for d in 32768 16384; do lg "8B d$d: head $(tg "$E") new $(tg EMBER_CUDA_PTX_DIR=$N "$E")"; done
lg done
