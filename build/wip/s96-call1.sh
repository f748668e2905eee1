# s96-call1.sh (written in session 95 as norm1-call.sh, run as call 1 of session 96): build/wip/norm1-split.patch
# (add_rms_norm_q8_k_1's 2,048- and 4,096-wide forms as kernels of their own) and
# build/wip/route64.patch (mmv_route_q4_k_64: the routing of at most 64 experts only) on
# fresh PTX: every module's PTX and the sm_90 cubins (brought back: quant.ptx and
# moe.ptx from ptx.tar.xz into kernels/cuda, sm90.tar.xz's quant and moe cubins into
# kernels/cuda/sm90), the fusion, routing and conformance tests on it, then tg128
# rotated rounds: the 8B with the norm's forms against $EMBER_CUDA_NORM1_WIDE=1, and
# V2-Lite with both against both wide and against the norm's alone. The gains expected
# are ~1% each, below one binary's spread between calls: compare within the call only.
# Before it: git apply both patches; TESTS="cuda" sh build/dev-build.sh (it warns that
# quant.ptx and moe.ptx are stale: this call brings them); the plain hold-out; carry
# bin/dev.
set -u
MODELS="q4 v2" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
ptx_all /tmp/px
cubin_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestNorm1|TestFused|TestBranch|TestNormRouter|TestMoERouting' 300
tgroup 1 'Conformance' 300
wait
gsum tests 0 1
unset EMBER_CUDA_PTX_DIR
N="EMBER_CUDA_PTX_DIR=/tmp/px $E"
W="EMBER_CUDA_NORM1_WIDE=1 EMBER_CUDA_ROUTE_WIDE=1"
sweep 5 q4 "$W $N" "$N" 2>&1 | tee -a "$OUT/log.txt"
sweep 5 v2 "$W $N" "$N" "EMBER_CUDA_ROUTE_WIDE=1 $N" 2>&1 | tee -a "$OUT/log.txt"
lg done
