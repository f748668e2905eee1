# s89-call1.sh (session 89, first call; ~330 s): bin/dev built with parallel-load.patch,
# split1-half-sm.patch and the split_online / split_meet helpers (attention_split.cuh)
# applied (TESTS="cuda deepseek2"). 1) module loads, parallel against serial, cold and
# warm compute cache, both kernel sets (s89-load.sh's loop). 2) attention_split and
# attention_split1 PTX made here (the helpers changed their bodies under nvcc 12.4),
# returned in $OUT/ptx.tar.xz; same_bodies for the rest. 3) on that PTX: the split,
# fused-attention and long-context tests at Hopper's limit, the same groups on the
# compatibility kernels at an RTX card's 99 KiB, deepseek2's CUDA tests. Models for
# call 2 are written meanwhile.
set -u
MODELS=none . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader)"
ld() { timeout -s KILL 120 env "$@" "$E" bench -backend cuda -p 0 -n 1 -r 1 2>&1 | grep '^load' | cut -d' ' -f2-; }
for r in 1 2; do
	for ks in "" "EMBER_CUDA_COMPAT=1"; do
		lg "round $r ${ks:-hopper} cold: serial $(ld $ks CUDA_CACHE_DISABLE=1 EMBER_CUDA_SERIAL_LOAD=1) | parallel $(ld $ks CUDA_CACHE_DISABLE=1) ; warm: serial $(ld $ks EMBER_CUDA_SERIAL_LOAD=1) | parallel $(ld $ks)"
	done
done
sh build/ptx-copy.sh /tmp/px attention_split attention_split1 || lg "PTX FAILED"
(cd /tmp/px && tar cJf "$OUT/ptx.tar.xz" attention_split.ptx attention_split1.ptx)
same_bodies /tmp/px attention_split attention_split1 | tee -a "$OUT/log.txt"
lg "ptx done"
MODELS="q4 q8 v2" . build/gpu-setup.sh "$OUT"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestSplit1TC|TestSplit1Plan' 150
tgroup 1 'TestSplitAttention|TestFusedAttentionQ8K|TestConformanceLongContextKernels' 150
(cd inference/model/deepseek2 && timeout -s KILL 150 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3 | sed 's/^/deepseek2: /') &
wait
gsum hopper 0 1
grep -E 'values differ' /tmp/g0.log | tee -a "$OUT/log.txt"
unset EMBER_CUDA_PTX_DIR
export EMBER_CUDA_COMPAT=1 EMBER_CUDA_SMEM_LIMIT=101376
tgroup 0 'TestSplit1TC|TestSplit1Plan' 100
tgroup 1 'TestSplitAttention|TestFusedAttentionQ8K' 100
wait
gsum "compat 99K" 0 1
grep -E 'values differ' /tmp/g0.log | tee -a "$OUT/log.txt"
lg done
