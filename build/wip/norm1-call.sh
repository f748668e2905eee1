# norm1-call.sh (session 95, for the next device call): build/wip/norm1-split.patch
# (add_rms_norm_q8_k_1's 2,048- and 4,096-wide forms as kernels of their own) on fresh
# PTX: every module's PTX and the sm_90 cubins (brought back: unpack ptx.tar.xz's
# quant.ptx into kernels/cuda and sm90.tar.xz into kernels/cuda/sm90), the fusion and
# conformance tests on it, then tg128 of the 8B and V2-Lite, one-width forms against
# $EMBER_CUDA_NORM1_WIDE=1, rotated rounds (the gain expected is ~1%, below one binary's
# spread between calls: compare within the call only).
# Before it: git apply build/wip/norm1-split.patch; TESTS="cuda" sh build/dev-build.sh
# (it warns that quant.ptx is stale: this call brings it); the plain hold-out; carry
# bin/dev.
set -u
MODELS="q4 v2" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
ptx_all /tmp/px
cubin_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestNorm1|TestFused|TestBranch|TestNormRouter' 240
tgroup 1 'Conformance' 240
wait
gsum tests 0 1
unset EMBER_CUDA_PTX_DIR
N="EMBER_CUDA_PTX_DIR=/tmp/px $E"
sweep 5 q4 "EMBER_CUDA_NORM1_WIDE=1 $N" "$N" 2>&1 | tee -a "$OUT/log.txt"
sweep 5 v2 "EMBER_CUDA_NORM1_WIDE=1 $N" "$N" 2>&1 | tee -a "$OUT/log.txt"
lg done
