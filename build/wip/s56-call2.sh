#!/bin/sh
# s56-call2.sh (session 56): add_rms_norm_q8_k_r against the two launches, with the
# branch's main-run edge off the fork full (EMBER_CUDA_BRANCH_EDGES 7, the default) and
# programmatic (3): the main run's first launch is now mmv_route_q4_k (396 blocks), not
# the router's 64, so the full edge may cost more there. V2-Lite tg128, one binary, the
# PTX of s56-call1.sh (carried as bin/pb/ptx.tar.xz), four sides a round, the order
# rotated each round.
# Local steps: bin/dev as for s56-call1.sh; its ptx.tar.xz copied into bin/pb; carry
# bin/dev and bin/pb.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s56c2}"
mkdir -p /tmp/pc && tar xJf bin/pb/ptx.tar.xz -C /tmp/pc
export EMBER_CUDA_PTX_DIR=/tmp/pc
wait
t() { [ $(($(date +%s) - T0)) -lt 470 ]; }
S1="EMBER_CUDA_NORM_ROUTER=0 $E" S2="$E" S3="EMBER_CUDA_BRANCH_EDGES=3 $E" S4="EMBER_CUDA_NORM_ROUTER=0 EMBER_CUDA_BRANCH_EDGES=3 $E"
for r in 1 2 3 4 5 6; do
	t || break
	line="round $r:"
	for i in 1 2 3 4; do
		k=$(((i + r) % 4 + 1))
		eval "cmd=\$S$k"
		v=$(q env $cmd bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/v2.gguf | sed 's/(.*//')
		line="$line s$k $v"
		echo "s$k $v" >>/tmp/s56.txt
	done
	el "$line"
done
for k in 1 2 3 4; do el "s$k median $(grep "^s$k " /tmp/s56.txt | cut -d' ' -f2 | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"; done
el "s1 two launches, edges 7; s2 fused, edges 7; s3 fused, edges 3; s4 two launches, edges 3"
el done
