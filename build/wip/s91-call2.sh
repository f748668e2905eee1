# s91-call2.sh (session 91): mvg.cuh's arrival forms (which part of the first call's
# per-block fence and counter costs), and both tails with the cheaper arrivals. nvcc only.
set -u
L=$OUT
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader | tee -a "$L/log.txt"
(cd build/micro && nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/mvp mvp.cu 2>&1 | grep -i error)
for g in 0 3000; do
	NORM=9 GAP=$g timeout 200 /tmp/mvp 2>&1 | tee -a "$L/log.txt"
done
