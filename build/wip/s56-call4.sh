#!/bin/sh
# s56-call4.sh (session 56): with all of a branch's edges programmatic
# (EMBER_CUDA_BRANCH_EDGES=3, s56-call2.sh and s56-call3.sh: +1.0-1.7% on V2-Lite), do
# the settings chosen beside edges 7 still hold? 3 against 3 with the main run rounding
# its own input (EMBER_CUDA_NO_PIN=1, session 26's pinned rounding off), 1 (the join's
# edge full), and no branches at all (EMBER_CUDA_NO_BRANCH=1). V2-Lite tg128, the order
# rotated each round; local steps and carry as for s56-call2.sh.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s56c4}"
mkdir -p /tmp/pc && tar xJf bin/pb/ptx.tar.xz -C /tmp/pc
export EMBER_CUDA_PTX_DIR=/tmp/pc EMBER_CUDA_NORM_ROUTER=0
wait
t() { [ $(($(date +%s) - T0)) -lt 420 ]; }
C1="EMBER_CUDA_BRANCH_EDGES=3" C2="EMBER_CUDA_BRANCH_EDGES=3 EMBER_CUDA_NO_PIN=1" C3="EMBER_CUDA_BRANCH_EDGES=1"
C4="EMBER_CUDA_BRANCH_EDGES=3 EMBER_CUDA_NO_BRANCH=1"
for r in 1 2 3 4 5 6 7; do
	t || break
	line="round $r:"
	for i in 1 2 3 4; do
		k=$(((i + r) % 4 + 1))
		eval "c=\$C$k"
		v=$(q env $c $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/v2.gguf | sed 's/(.*//')
		line="$line c$k $v"
		echo "c$k $v" >>/tmp/s56p.txt
	done
	el "$line"
done
for k in 1 2 3 4; do el "c$k median $(grep "^c$k " /tmp/s56p.txt | cut -d' ' -f2 | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"; done
el "c1 edges 3; c2 edges 3, no pin; c3 edges 1; c4 no branches"
el done
