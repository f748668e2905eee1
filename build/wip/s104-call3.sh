# s104-call3.sh (session 104): (1) build/micro/mvp.cu's NORM=12 (mvl.cuh: the norm and
# SwiGLU as local tails of the products before them, activation groups as small as a
# producer block's rows; the consumers apply the norm's scale) against the engine's
# chain, no norm and no SwiGLU, at gap 0 and 3000 ns; (2) s104-call2.sh's tests on the
# committed PTX (TestFusedAddRMSNormMVS, TestMoEQ5PBits, TestWidenQ5Products), beside
# the micro's compile. Before it: TESTS="cuda" sh build/dev-build.sh; /tmp/hold.sh out;
# carry bin/dev. ~150 s after the start.
set -u
MODELS=" " . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader)"
(cd build/micro && nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/mvp mvp.cu >/tmp/mvp.log 2>&1; el "mvp built rc $?") | tee -a "$OUT/log.txt" &
tgroup 0 'TestFusedAddRMSNormMVS|TestMoEQ5PBits|TestWidenQ5Products|TestKernelNamesExist|TestCubinsLoad' 150
wait
gsum tests 0
grep -E -- '^--- ' /tmp/g0.log | tee -a "$OUT/log.txt"
tail -3 /tmp/mvp.log >>"$OUT/log.txt"
for g in 0 3000; do
	NORM=12 GAP=$g timeout -s KILL 120 /tmp/mvp 2>&1 | tee -a "$OUT/log.txt"
done
lg done
