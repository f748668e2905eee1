# s101-call1.sh (session 101): every module's PTX and sm_90 cubins made here for
# rms_norm_q8_k_1 (quant.cu: a decode step's first norm on one block) and the folded
# argmax twins (sample.cu, sample.cuh: argmax_chunks4, argmax_reduce_pair); their tests
# (argmax, sampling, feeder, norm1 bits and queues, fused add-norm, deepseek2's CUDA
# tests) on that PTX; then tg128 sweeps of both targets over three sides: HEAD's
# kernels (embedded PTX, EMBER_CUDA_NO_RMS_NORM1=1), the new PTX without the new norm,
# the new PTX whole; timelines of both; tg128 -r 3 of both on the new PTX.
# Before it: TESTS="cuda deepseek2" sh build/dev-build.sh; the plain hold-out; carry bin/dev.
set -u
MODELS="v2 q4" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
ptx_all /tmp/px
cubin_all /tmp/px
lg "ptx and cubins: $(ls -la $OUT | tr '\n' ' ')"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestArgMax|TestFeeder|TestNorm1|TestFuseQueue|TestSample|TestTopK|TestFusedSwiGLU|TestFusedDecoderLayers' 200
tgroup 1 'TestFusedAddRMSNorm' 200
ds2_tests 200 | tee -a "$OUT/log.txt"
wait
gsum tests 0 1
cp /tmp/g0.log /tmp/g1.log "$OUT/" 2>/dev/null
unset EMBER_CUDA_PTX_DIR
while pgrep -f "ember synth" >/dev/null; do sleep 1; done
lg "models: $(ls -la /tmp/*.gguf | tr '\n' ' ')"
N="EMBER_CUDA_PTX_DIR=/tmp/px $E"
tg1 v2 "$N" >/dev/null
sweep 7 v2 "EMBER_CUDA_NO_RMS_NORM1=1 $E" "EMBER_CUDA_NO_RMS_NORM1=1 $N" "$N" 2>&1 | tee -a "$OUT/log.txt"
sweep 7 q4 "EMBER_CUDA_NO_RMS_NORM1=1 $E" "EMBER_CUDA_NO_RMS_NORM1=1 $N" "$N" 2>&1 | tee -a "$OUT/log.txt"
sh build/timeline-ptx.sh /tmp/tl >/tmp/tl.log 2>&1 || { lg "TL FAILED"; tail -5 /tmp/tl.log; }
tl tl_v2.log v2
tl tl_q4.log q4
export EMBER_CUDA_PTX_DIR=/tmp/px
lg "8B tg128 -r 3 (new PTX) $(tg3 q4 q4)"
lg "V2-Lite tg128 -r 3 (new PTX) $(tg3 v2 v2)"
lg done
