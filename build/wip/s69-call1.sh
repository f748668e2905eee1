#!/bin/sh
# s69-call1.sh (written in session 68, not run): why ffn (the FFN half in one launch)
# lost in the engine (8B tg128 522.2 against the chain's 525.2, s68-call4) where
# build/micro/ffs.cu's same form won (42.05 against 44.2 us a layer with 8 us between
# FFN halves, s68-call2a). (1) The micro (now the engine's kernel itself) with its
# cluster from __cluster_dims__ as the engine launches it (CDIMS=1) and from the launch
# attribute (CDIMS=0, as s68-call2a's form was launched), against the chain. (2) The engine's
# timelines of one 8B step with and without EMBER_CUDA_FFN=1 (tl: each kernel's release
# and end; the ffn launch against mmv_multi + swiglu_q8_k + down, and what the norm and
# Q/K/V after it do). (3) The sweep again. Before the call: TESTS=cuda sh
# build/dev-build.sh, hold kernels/cuda/*.ptx (the binary embeds them), testdata/vocab
# and testdata/tokenizers out; carry bin/dev.
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s69c1}"
(sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED") &
sh build/ffs-gpu.sh 2>&1 | tee "$L/ffs.txt"
wait
el "model and timeline PTX ready"
tl tl_chain.log q4
tl tl_ffn.log q4 EMBER_CUDA_FFN=1
grep -E "ffn_q|mmv_multi|swiglu_q8_k|mmv_q[46]_k_1|add_rms_norm_q8_k_1" "$L/tl_ffn.log" | head -20
sweep 4 q4 "$E" "EMBER_CUDA_FFN=1 $E" 2>&1 | tee "$L/sweep-q4.txt"
el done
