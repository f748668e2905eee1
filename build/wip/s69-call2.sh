#!/bin/sh
# s69-call2.sh (session 69): (1) build/micro/ffs2.cu: the engine's ffn kernel with one
# difference from session 68's first micro form (ffs_old.cuh) removed at a time, beside
# the old form and the chain, at gaps 0 and 8 us (s69-call1: the engine's code 35.9
# against the old form's 34.3 and the chain's 36.1 us a layer). (2) build/micro/moefs.cu:
# V2-Lite's routed experts split along the hidden width against the engine's chain
# (mmv_route_q4_k, swiglu_q8, mmv_id_q8_0, moe_sum_add). (3) build/micro/qkb.cu: V2-Lite's
# absorbed query (q_nope, quant_q8, attn_k_b) as one launch of clusters a head, bit for
# bit against the chain. (4) s68-call1.sh's F16/BF16
# FMA patch (its header says what it needs). Before the call: TESTS="cuda archs
# deepseek2" sh build/dev-build.sh, hold kernels/cuda/*.ptx, testdata/vocab and
# testdata/tokenizers out; carry bin/dev.
set -u
export MODELS="f16 bf"
. build/gpu-setup.sh "${OUT:-/tmp/s69c2}"
(cd build/micro && nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/ffs2 ffs2.cu 2>&1 | grep -i error)
for g in 0 8000; do GAP=$g timeout -s KILL 120 /tmp/ffs2 2>&1 | tee -a "$L/ffs2.txt"; done
el "ffs2 done"
(cd build/micro && nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/moefs moefs.cu 2>&1 | grep -i error)
for g in 0 8000; do GAP=$g timeout -s KILL 150 /tmp/moefs 2>&1 | tee -a "$L/moefs.txt"; done
el "moefs done"
(cd build/micro && nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/qkb qkb.cu 2>&1 | grep -i error)
for g in 0 8000; do GAP=$g timeout -s KILL 60 /tmp/qkb 2>&1 | tee -a "$L/qkb.txt"; done
el "qkb done"
ptx_all /tmp/px
rm -rf /tmp/vH && cp -r /tmp/px /tmp/vH
(cd /tmp/vH && patch -s -p3 <"$R/build/wip/s68-half-fma.patch") || el "PATCH FAILED"
for m in $(cd /tmp/vH && ls *.cu | sed 's/\.cu$//'); do sh build/ptx-one.sh /tmp/vH "$m" & done
wait
(cd /tmp/vH && tar cJf "$L/ptx-vH.tar.xz" *.ptx)
el "variant PTX done; models ready"
sweep 3 f16 "EMBER_CUDA_PTX_DIR=/tmp/px $E" "EMBER_CUDA_PTX_DIR=/tmp/vH $E" >"$L/sweep-f16.txt" 2>&1
cat "$L/sweep-f16.txt"
sweep 3 bf "EMBER_CUDA_PTX_DIR=/tmp/px $E" "EMBER_CUDA_PTX_DIR=/tmp/vH $E" >"$L/sweep-bf.txt" 2>&1
cat "$L/sweep-bf.txt"
export EMBER_CUDA_PTX_DIR=/tmp/vH
all_tests 'TestMatVec|TestF16' >"$L/tests.txt" 2>&1
cat "$L/tests.txt"
unset EMBER_CUDA_PTX_DIR
el done
