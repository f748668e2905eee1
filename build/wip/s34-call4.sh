#!/bin/sh
# Session 34, device call 4 (no carry): does att1's shared memory (a1_smem, sized for
# A1_N = 256 positions: 152 KB at 128 dims) cost it in the chain? build/micro/att1.cu
# built with A1_N 256, 128 and 64 (copies of the tree, attention_one.cuh edited), best of
# its runs at N = 1, 33 and 128, two rounds.
set -u
for A in 256 128 64; do
	d=/tmp/a$A
	rm -rf $d && mkdir -p $d/build $d/kernels && cp -r build/micro $d/build/ && cp -r kernels/cuda $d/kernels/
	sed -i "s/^#define A1_N 256 /#define A1_N $A /" $d/kernels/cuda/attention_one.cuh
	grep -c "define A1_N $A " $d/kernels/cuda/attention_one.cuh
	(cd $d/build/micro && nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/att1-$A att1.cu 2>&1 | grep -i error) &
done
wait
for r in 1 2; do
	for A in 256 128 64; do
		for n in 1 33 128; do
			[ $n -gt $A ] && continue
			echo "A1_N $A: $(N=$n timeout 60 /tmp/att1-$A 2>&1 | grep '32 layers')"
		done
	done
done
