# xeon-ab.sh: on the GPU machine's Xeon (Sapphire Rapids: Golden Cove cores, AVX-512 and
# AVX-VNNI), one pinned thread: the committed CPU kernels (cpu.old.test) against a patched
# build (cpu.new.test), ROUNDS (default 5) alternating rounds of the benchmarks BENCH
# names, then each benchmark's GOPS or GB/s per side, sorted (the middle one is the median).
# Prepare here: go test -c -o bin/dev/cpu.old.test ./kernels/cpu/; git apply PATCH;
# go test -c -o bin/dev/cpu.new.test ./kernels/cpu/; git apply -R PATCH; xz both; carry
# them. Session 82 ran it with the two-chain patch (landed in c98ad52) and
# BENCH='BenchmarkLGGemm$/Q.*/avx2|BenchmarkGemmKQ$/Q[2-6]_K/avx2'; next:
# build/wip/vnni-direct-q8.patch with
# BENCH='BenchmarkLGGemmSmallBatch/Q8_0|BenchmarkLGGemv/Q8_0' (GB/s: the fifth column).
cd kernels/cpu
for b in old new; do xz -d -c ../../bin/dev/cpu.$b.test.xz > /tmp/cpu.$b.test && chmod +x /tmp/cpu.$b.test; done
/tmp/cpu.new.test -test.run 'TestGemmVNNI256Bits|TestGemmKQRowsBits' 2>&1 | tail -1
for i in $(seq 1 "${ROUNDS:-5}"); do for b in old new; do
	taskset -c 3 /tmp/cpu.$b.test -test.run XXX -test.bench "${BENCH:?}" -test.benchtime 8x -test.cpu 1 2>&1 |
		grep Bench | awk -v b=$b '{print b, $1, $5}'
done; done | sort -k2,2 -k1,1 | awk '{k=$2" "$1; a[k]=a[k]" "$3} END {for (k in a) print k, a[k]}' | sort
