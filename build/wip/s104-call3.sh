# s104-call3.sh (session 104): (1) build/micro/mvp.cu's NORM=12 (mvl.cuh: the norm and
# SwiGLU as local tails of the products before them, activation groups as small as a
# producer block's rows; the consumers apply the norm's scale) against the engine's
# chain, no norm and no SwiGLU, at gap 0 and 3000 ns; (2) the tests s104-call1's group limit cut off, on the
# committed PTX (TestFusedAddRMSNormMVS, TestMoEQ5PBits, TestWidenQ5Products), beside
# the micro's compile. Before it: TESTS="cuda" sh build/dev-build.sh; /tmp/hold.sh out;
# carry bin/dev. (3) V2-Lite single runs with the idle gaps' lengths. ~220 s after the start.
set -u
MODELS="v2" . build/gpu-setup.sh "$OUT"
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
# (3) six single V2-Lite tg128 runs with EMBER_CUDA_STATS: the idle gaps between steps by
# length (gputime.go's gapHist), to tell a slow run's few long stalls from many short gaps
while pgrep -f "ember synth" >/dev/null; do sleep 1; done
for i in 1 2 3 4 5 6; do
	EMBER_CUDA_STATS=1 timeout -s KILL 100 "$E" bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/v2.gguf >/tmp/st.txt 2>&1
	lg "run $i: $(grep '^| ' /tmp/st.txt | tail -1 | cut -d'|' -f8 | tr -d ' ') | $(grep -E 'device \(events|idle gaps' /tmp/st.txt | tr -s ' ' | paste -sd' ')"
done
lg done
