# s104-call3b.sh (session 104): s104-call3.sh's micro alone, for a call with little
# device time left: mvp.cu's NORM=12 (mvl.cuh) at gap 0 and 3000 ns. No carry (~80 s).
set -u
L=$OUT
el() { echo "[$(($(date +%s) - T0)) s] $*"; }
T0=$(date +%s)
el "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader)" | tee -a "$L/log.txt"
(cd build/micro && nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/mvp mvp.cu >/tmp/mvp.log 2>&1)
el "mvp built rc $?" | tee -a "$L/log.txt"
tail -3 /tmp/mvp.log >>"$L/log.txt"
for g in 0 3000; do
	NORM=12 GAP=$g timeout -s KILL 90 /tmp/mvp 2>&1 | tee -a "$L/log.txt"
done
el done | tee -a "$L/log.txt"
