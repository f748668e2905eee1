#!/bin/sh
# s68-call2a.sh: ffs.cu's second form (down's first step before the cluster barriers, the
# partials' sum with split loads, clusters of 16) against the chain; output into $OUT.
set -u
sh build/ffs-gpu.sh 2>&1 | tee "${OUT:-/tmp}/ffs.txt"
GAPS=0 REDS=2 DFIRSTS=0 VAR="cs8 gpc2 w8,cs16 gpc4 w8" sh build/ffs-gpu.sh 2>&1 | tee -a "${OUT:-/tmp}/ffs.txt"
