#!/bin/sh
# s56-call3.sh (session 56): which of a branch's edges are programmatic
# (EMBER_CUDA_BRANCH_EDGES: 1 the side's first off the fork, 2 the join's off the side's
# last, 4 the main run's first off the fork full), now that the router's product loads
# its weights before its wait (mmv_f32_1w, session 52): s56-call2.sh found 3 (all three
# programmatic) ~1.7% ahead of the default 7 on V2-Lite, six rounds of six. Here 7, 3,
# 1, 2 and 0, the router's own launch (EMBER_CUDA_NORM_ROUTER=0), the order rotated
# each round. Local steps and carry as for s56-call2.sh.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s56c3}"
mkdir -p /tmp/pc && tar xJf bin/pb/ptx.tar.xz -C /tmp/pc
export EMBER_CUDA_PTX_DIR=/tmp/pc EMBER_CUDA_NORM_ROUTER=0
wait
t() { [ $(($(date +%s) - T0)) -lt 420 ]; }
set -- 7 3 1 2 0
for r in 1 2 3 4 5 6; do
	t || break
	line="round $r:"
	for i in 0 1 2 3 4; do
		e=$(echo "$@" | cut -d' ' -f$(((i + r) % 5 + 1)))
		v=$(q env EMBER_CUDA_BRANCH_EDGES=$e $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/v2.gguf | sed 's/(.*//')
		line="$line e$e $v"
		echo "e$e $v" >>/tmp/s56e.txt
	done
	el "$line"
done
for e in "$@"; do el "edges $e median $(grep "^e$e " /tmp/s56e.txt | cut -d' ' -f2 | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"; done
el done
