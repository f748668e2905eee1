cd kernels/cpu && xz -d -k ../../bin/dev/cpu.test.xz -c > /tmp/cpu.test && chmod +x /tmp/cpu.test
grep -m1 "model name" /proc/cpuinfo; grep -o -w -E 'avx_vnni|avx512_vnni|amx_tile' /proc/cpuinfo | sort -u | tr '\n' ' '; echo
timeout 120 /tmp/cpu.test -test.run 'TestGemmVNNI256Bits|TestGemmKQ|TestLGGemm' -test.count 1 2>&1 | tail -3
timeout 200 /tmp/cpu.test -test.run XXX -test.bench 'BenchmarkGemmKQ$/Q[2-6]_K/avx2|BenchmarkLGGemm$/Q.*/avx2' -test.benchtime 8x -test.count 3 -test.cpu 1 2>&1 | grep Bench | awk '{print $1, $5}' | sort | awk '{a[$1]=a[$1]" "$2} END {for (k in a) print k, a[k]}' | sort
