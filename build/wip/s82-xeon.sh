# s82-xeon.sh: on the GPU machine's Xeon (Golden Cove cores, AVX-VNNI), one thread: the
# AVX-VNNI batch products as committed (cpu.old.test) against build/wip/vnni-2chain.patch
# (cpu.new.test: two vpdpbusd chains a row; kq_vnni_gains on for every K-quant), three
# rounds alternating. The same for build/wip/vnni-direct-q8.patch (Q8_0 decode and small
# batches on AVX-VNNI): bench 'BenchmarkLGGemmSmallBatch/Q8_0|BenchmarkLGGemv/Q8_0'. Prepare here: go test -c -o bin/dev/cpu.old.test ./kernels/cpu/;
# git apply build/wip/vnni-2chain.patch; go test -c -o bin/dev/cpu.new.test ./kernels/cpu/;
# git apply -R build/wip/vnni-2chain.patch; xz both; carry them.
cd kernels/cpu
for b in old new; do xz -d -c ../../bin/dev/cpu.$b.test.xz > /tmp/cpu.$b.test && chmod +x /tmp/cpu.$b.test; done
/tmp/cpu.new.test -test.run 'TestGemmVNNI256Bits|TestGemmKQRowsBits' 2>&1 | tail -1
for i in 1 2 3; do for b in old new; do
	/tmp/cpu.$b.test -test.run XXX -test.bench 'BenchmarkLGGemm$/Q.*/avx2|BenchmarkGemmKQ$/Q[2-6]_K/avx2' -test.benchtime 8x -test.cpu 1 2>&1 | grep Bench | awk -v b=$b '{print b, $1, $5}'
done; done | sort -k2,2 -k1,1 | awk '{k=$2" "$1; a[k]=a[k]" "$3} END {for (k in a) print k, a[k]}' | sort
