# s96-call4.sh: mmv_route_q4_k_64s without the weights' normalisation and scale code
# (the host takes it for norm off and scale 0 or 1: V2-Lite's; 2,704 SASS instructions
# against 3,120 with nvcc 12.4). Every module's PTX and the sm_90 cubins (brought back),
# the routing tests and deepseek2's CUDA tests on them, then V2-Lite tg128 on that PTX
# against the same PTX with session 96's committed moe.cu (build/wip/s96-moe-head.cu)
# as moe.ptx. Before it: git show 53ffe6f:kernels/cuda/moe.cu >build/wip/s96-moe-head.cu
# (removed after the call); TESTS="cuda deepseek2" sh build/dev-build.sh; the plain
# hold-out; carry bin/dev.
set -u
MODELS="v2" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
ptx_all /tmp/px
rm -rf /tmp/pxa && cp -r /tmp/px /tmp/pxa && cp build/wip/s96-moe-head.cu /tmp/pxa/moe.cu && cp kernels/cuda/*.cuh /tmp/pxa/ && sh build/ptx-one.sh /tmp/pxa moe && lg "head moe.ptx made"
cubin_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMoERouting$|TestMoERoutingWide64' 200
tgroup 1 'TestMoERoutingNoGuess|TestMoERoutingSmallGrid' 200
(cd inference/model/deepseek2 && timeout -s KILL 200 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3 | sed 's/^/deepseek2: /' >>"$OUT/log.txt") &
wait
gsum tests 0 1
unset EMBER_CUDA_PTX_DIR
sweep 5 v2 "EMBER_CUDA_PTX_DIR=/tmp/pxa $E" "EMBER_CUDA_PTX_DIR=/tmp/px $E" 2>&1 | tee -a "$OUT/log.txt"
lg done
