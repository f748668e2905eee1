#!/bin/sh
# mmh-gpu.sh: session 31's device calls, from the repository root with bin/dev carried:
# build/micro/mmh.cu (the producer/consumer mmg, NOTES session 31) in each variant of
# MMH_VARIANTS (apart by spaces, a variant's nvcc flags by commas; MH_ONE=1 for the
# 14336x4096 shape alone), beside mmg; with build/micro/old-mmg.cu.txt (a copy of an
# older mmg.cu) present and OLD not empty, mmg from it too; then, unless ENGINE is empty,
# the tree's mmg module in the engine against the embedded PTX (64 streams) and
# TestMMG/TestMMF on it.
#   MH_ONE=1 ENGINE= MMH_VARIANTS="-DMH_SW=1,-DMH_WSN=3 -DMH_SW=1,-DMH_NODEQ=1" sh build/mmh-gpu.sh
set -u
cd build/micro
i=0
for v in ${MMH_VARIANTS:-"-DMH_RS=4"}; do # variants apart by spaces, a variant's flags by commas
	i=$((i + 1))
	nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false $(echo "$v" | tr , ' ') -o /tmp/mmh-$i mmh.cu -lcublas &
done
wait
i=0
for v in ${MMH_VARIANTS:-"-DMH_RS=4"}; do
	i=$((i + 1))
	echo "== mmh $v (tree mmg.cu)" && /tmp/mmh-$i
done
if [ -e old-mmg.cu.txt ] && [ -n "${OLD-1}" ]; then
	rm -rf /tmp/kold && cp -r ../../kernels/cuda /tmp/kold && cp old-mmg.cu.txt /tmp/kold/mmg.cu
	nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -DMMG_CU='"/tmp/kold/mmg.cu"' -o /tmp/mmh-old mmh.cu -lcublas &&
		echo "== session 30's mmg layout" && /tmp/mmh-old
fi
cd ../..
[ -n "${ENGINE-1}" ] || exit 0
MODULES=mmg VARIANTS="tree:" BENCH="${BENCH:-s64}" ROUNDS=${ROUNDS:-2} TESTS='TestMMG|TestMMF' sh build/ptx-variants.sh
