# s98-call3.sh (session 98, the last ~250 s of device time): mmv_idsum_q8_0 timed only
# (no tests: s98-call2b.sh has them), V2-Lite tg128 in rotated rounds against
# EMBER_CUDA_IDSUM=0 and the r1 form, on the binary's embedded PTX (moesum.ptx from
# nvcc 12.4 here). Before it: git apply build/wip/idsum.patch (+ the local moesum.ptx);
# TESTS=" " sh build/dev-build.sh; the plain hold-out; carry bin/dev.
set -u
MODELS="v2" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
while pgrep -f "ember synth" >/dev/null; do sleep 1; done
sweep 3 v2 "EMBER_CUDA_IDSUM=0 $E" "$E" "EMBER_CUDA_IDSUM=r1 $E" 2>&1 | tee -a "$OUT/log.txt"
lg done
