#!/bin/sh
# s68-call1a.sh: build/micro/ffs.cu (the FFN half split along the hidden width, one
# launch) against the chain, as build/ffs-gpu.sh runs it; output into $OUT.
set -u
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
sh build/ffs-gpu.sh 2>&1 | tee "${OUT:-/tmp}/ffs.txt"
