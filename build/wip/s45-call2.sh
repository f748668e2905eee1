#!/bin/sh
# s45-call2.sh (session 45): every module's PTX made again for two twins mended (no
# change in what the kernels compute): sample.cu's argmax_block4 scans its float4s with
# one argmax_scan4, and moe.cu's mmv_route_q4_k (opt-in, EMBER_CUDA_ROUTE_FUSE) loads
# its weights through mv1.cuh's ldw16 with wev(true), EMBER_WEVICT's rule, as
# mmv_id_q4_k does. With nvcc 12.4 only argmax_f32 and mmv_route_q4_k change (per entry);
# mv1.cuh's change (wev) changes every hash. Returns $OUT/ptx.tar.xz; runs the backend's
# tests (routing with the fused launch among them), conformance, the CUDA goldens and
# deepseek2's CUDA tests on it; then tg128 new / committed PTX (the same binary, the
# embedded PTX), alternating, and V2-Lite with the fused routing once each way.
# Local steps: sh build/wip/s45-prep2.sh (carry bin/dev), then s45-prep.sh restore.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s45c2}"
ptx_tests 'MatMul|MMQ|MMV|MatVec|Products|IDW|F16Cop|SwiGLUQ8|MoERouting|HeadProducts|ArgMax|TopK|SampleAhead|KernelNamesExist|EmbeddedKernelsWait|Widen'
t() { q env $1 bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$2.gguf; }
for r in 1 2; do el "tg128 new/committed: q4 $(t "$N" q4) / $(t "$E" q4); v2 $(t "$N" v2) / $(t "$E" v2)"; done
el "v2 tg128 route-fuse new/committed: $(t "EMBER_CUDA_ROUTE_FUSE=1 $N" v2) / $(t "EMBER_CUDA_ROUTE_FUSE=1 $E" v2)"
