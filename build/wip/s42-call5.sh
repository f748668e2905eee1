#!/bin/sh
# s42-call5.sh: why DeepSeek-V2-Lite's routed Q5_0 downs (mmv_id_q5_0, 768 blocks, one
# wave) stream at ~1.0 TB/s (11.95 us alone, call 1): ncu's sections for one launch of
# it in a decode step (profile-cuda.sh DETAIL). bin/dev: ember only.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s42c5}"
wait
DETAIL=mmv_id_q5_0 sh build/profile-cuda.sh "$E" /tmp/v2.gguf "$L/d" -p 0 -n 16 >/dev/null 2>&1 || el "profile failed"
grep -v '^==PROF==' "$L/d/detail.txt" | grep -E -A3 'Duration|Throughput|Achieved Occupancy|Registers|Stall|Warp Cycles|Eligible|Issued|L2 Hit|Mem Busy|Max Bandwidth|DRAM' | head -80
