# s93-call2.sh (session 93): the attention tests in full on the device's PTX (smem-split-scores).
set -u
MODELS=" " . build/gpu-setup.sh "$OUT"
[ -f /tmp/px/attention.ptx ] || ptx_all /tmp/px 2>&1 | tee -a "$L/log.txt"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 Attention 420
wait
gsum tests 0
grep -E -- '^--- ' /tmp/g0.log | tail -40 >>"$L/log.txt"
el "all done" | tee -a "$L/log.txt"
