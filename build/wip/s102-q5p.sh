# s102-q5p.sh (written in session 101, not run): build/wip/q5p-downs.patch on the GPU:
# every module's PTX made here from the patched tree (mv1.cuh changes every hash;
# matmul's body gains mmv_id_q5p and q5p_pack), the patch's tests (TestMoEQ5PBits: the
# packed downs against the widened ones, bit for bit; TestMMVIDQueueQ5P; TestMoERouting
# and deepseek2's CUDA tests with the switch on), then V2-Lite tg128 rotated rounds with
# EMBER_CUDA_Q5P=1 against 0, and a timeline of each. Run build/micro/q5p.cu (or
# s101-call4.sh) first: if bytes do not bind the downs, this is not worth a call.
# Before it: git apply build/wip/q5p-downs.patch; TESTS="cuda deepseek2" sh
# build/dev-build.sh; the plain hold-out; carry bin/dev.
set -u
MODELS="v2" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
ptx_all /tmp/px
cubin_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px EMBER_CUDA_Q5P=1 # TestMoEQ5PBits sets its own
tgroup 0 'TestMoEQ5PBits|TestMMVIDQueueQ5P' 200
tgroup 1 'TestMoERouting$' 200
ds2_tests 200 | tee -a "$OUT/log.txt"
wait
gsum tests 0 1
cp /tmp/g0.log /tmp/g1.log "$OUT/" 2>/dev/null
unset EMBER_CUDA_PTX_DIR EMBER_CUDA_Q5P
while pgrep -f "ember synth" >/dev/null; do sleep 1; done
N="EMBER_CUDA_PTX_DIR=/tmp/px $E"
tg1 v2 "EMBER_CUDA_Q5P=1 $N" >/dev/null
sweep 8 v2 "EMBER_CUDA_Q5P=0 $N" "EMBER_CUDA_Q5P=1 $N" 2>&1 | tee -a "$OUT/log.txt"
sh build/timeline-ptx.sh /tmp/tl >/tmp/tl.log 2>&1 || { lg "TL FAILED"; tail -5 /tmp/tl.log; }
tl tl_v2_off.log v2 EMBER_CUDA_Q5P=0
tl tl_v2_q5p.log v2 EMBER_CUDA_Q5P=1
lg done
