# s100-call4.sh (session 100): argmax_f32_c (a greedy row's argmax by a cluster of eight
# blocks, sample.cu) against argmax_f32 (EMBER_CUDA_ARGMAX_ONE=1), both on every
# module's PTX made here; the argmax and feeder tests on both kernels; sample's PTX and
# sm_90 cubin brought back; then both targets' tg128 -r 3 on the embedded kernels (the
# moe_slot_sum change in; EMBER_CUDA_ARGMAX_ONE=1, as the embedded sample PTX had no
# argmax_f32_c). Before it: TESTS="cuda" sh build/dev-build.sh; the plain hold-out;
# carry bin/dev.
set -u
MODELS="v2 q4" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
ptx_all /tmp/px
tail -n +2 /tmp/px/sample.ptx >/tmp/sample.body && ptxas -arch=sm_90 -O3 -o /tmp/sample.cubin /tmp/sample.body &&
	gzip -9 -n -c /tmp/sample.cubin >"$OUT/sample.cubin.gz" && cp /tmp/px/sample.ptx "$OUT/" && lg "sample body $(sha256sum </tmp/sample.body | cut -c1-64)"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestArgMax|TestFeeder' 200
wait
gsum tests 0
cp /tmp/g0.log "$OUT/" 2>/dev/null
unset EMBER_CUDA_PTX_DIR
while pgrep -f "ember synth" >/dev/null; do sleep 1; done
N="EMBER_CUDA_PTX_DIR=/tmp/px $E"
tg1 v2 "$N" >/dev/null
sweep 5 v2 "EMBER_CUDA_ARGMAX_ONE=1 $N" "$N" 2>&1 | tee -a "$OUT/log.txt"
sweep 4 q4 "EMBER_CUDA_ARGMAX_ONE=1 $N" "$N" 2>&1 | tee -a "$OUT/log.txt"
export EMBER_CUDA_ARGMAX_ONE=1
lg "8B tg128 -r 3 (embedded) $(tg3 q4 q4)"
lg "V2-Lite tg128 -r 3 (embedded) $(tg3 v2 v2)"
lg done
