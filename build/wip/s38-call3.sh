#!/bin/sh
# s38-call3.sh: why attention_decD_1l4 loses to attention_split1 at 8,000 positions (call
# 2: 240 against 303 tok/s, one stream): ncu's durations and full sections for one step's
# launch of each (build/profile-cuda.sh DETAIL), and attention_decD_1c at 1,500 for
# comparison. Every module's PTX made on the H200 first (attention_one.cuh changed).
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s38c3}"
ptx_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
wait
PACK=1 DETAIL='attention_dec128_1l4' sh build/profile-cuda.sh "$E" /tmp/q4.gguf "$L/l4" -streams 1 -p 8000 -n 24 >/dev/null 2>&1
PACK=1 EMBER_CUDA_NO_DEC1L=1 DETAIL='attention_split1' sh build/profile-cuda.sh "$E" /tmp/q4.gguf "$L/s1" -streams 1 -p 8000 -n 24 >/dev/null 2>&1
PACK=1 DETAIL='attention_dec128_1c' sh build/profile-cuda.sh "$E" /tmp/q4.gguf "$L/c1" -streams 1 -p 1500 -n 24 >/dev/null 2>&1
for d in l4 s1 c1; do el "$d"; grep -i 'attention' "$L/$d/summary.txt" | head -5; done
