# s96-call3.sh: mmv_route_q4_k_64s (plain softmax routing of at most 64 experts, the
# guess on: no sigmoid, bias or group code; 3,120 SASS instructions against _64's 3,992
# with nvcc 12.4) and mmv_multi as the Q4_K-only kernel (1,304 against 2,280; Q4_K
# beside Q6_K now mmv_multi_q6_k, the old kernel's code) on fresh PTX: every module's PTX
# and the sm_90 cubins (brought back), the routing, multi, fusion and conformance tests
# and deepseek2's CUDA tests on it, then tg128 rotated rounds against the old kernels
# ($EMBER_CUDA_ROUTE_WIDE=64, $EMBER_CUDA_MULTI_MIXED=1). Before it: TESTS="cuda
# deepseek2" sh build/dev-build.sh (it warns that matmul.ptx and moe.ptx are stale);
# the plain hold-out; carry bin/dev.
set -u
MODELS="q4 v2" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
ptx_all /tmp/px
cubin_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMatMulSharedMulti|TestMoERouting$|TestMoERoutingWide64' 280
tgroup 1 'TestMoERoutingNoGuess|TestMoERoutingSmallGrid|TestMoERoutingWide$' 280
tgroup 2 'Conformance|TestNormRouter|TestDenseEvict|TestMatMulShared' 280
(cd inference/model/deepseek2 && timeout -s KILL 280 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3 | sed 's/^/deepseek2: /' >>"$OUT/log.txt") &
wait
gsum tests 0 1 2
N="EMBER_CUDA_PTX_DIR=/tmp/px $E"
sweep 5 q4 "EMBER_CUDA_MULTI_MIXED=1 $N" "$N" 2>&1 | tee -a "$OUT/log.txt"
sweep 5 v2 "EMBER_CUDA_ROUTE_WIDE=64 EMBER_CUDA_MULTI_MIXED=1 $N" "$N" "EMBER_CUDA_ROUTE_WIDE=64 $N" "EMBER_CUDA_MULTI_MIXED=1 $N" 2>&1 | tee -a "$OUT/log.txt"
lg done
