set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s74c1}"
ptx_all /tmp/px
mkdir -p /tmp/px2 && cp /tmp/px/*.ptx kernels/cuda/*.cu kernels/cuda/*.cuh /tmp/px2/ &&
	sh build/ptx-one.sh /tmp/px2 moe -DROUTE_SPEC=2 && cp /tmp/px2/moe.ptx "$L/moe-spec2.ptx" || el "PX2 FAILED"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestAttentionVB|TestAttentionLatentBits|TestVBQueue|TestMoERouting|TestMMVQueuePairedRuns' 150
model_tests 150
wait
grep -E -- '^(--- |ok|FAIL|PASS)' /tmp/g0.log | tail -30
cp /tmp/g0.log "$L/g0.log"
el "tests done"
P1="EMBER_CUDA_PTX_DIR=/tmp/px $E"
sweep 4 v2 "$P1" "EMBER_CUDA_ROUTE_SPEC=off $P1" "EMBER_CUDA_PTX_DIR=/tmp/px2 $E" 2>&1 | tee "$L/sweep-v2.txt"
el done
