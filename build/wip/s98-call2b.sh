# s98-call2b.sh (session 98): s98-call2.sh cut to the device time left. mmv_idsum_q8_0
# (build/wip/idsum.patch) on the binary's embedded PTX (moesum.ptx from nvcc 12.4 here;
# the device's nvcc makes it again, with its sm_90 cubin, to bring back and compare):
# the routing tests and deepseek2's CUDA tests, then V2-Lite in rotated rounds against
# EMBER_CUDA_IDSUM=0 and the r1 form, and V2-Lite's tg128 -r 3 with the clocks sampled.
# Before it: git apply build/wip/idsum.patch (+ the local moesum.ptx);
# TESTS="cuda deepseek2" sh build/dev-build.sh; the plain hold-out; carry bin/dev.
set -u
MODELS="v2" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
rm -rf /tmp/px && mkdir -p /tmp/px && cp kernels/cuda/*.cu kernels/cuda/*.cuh /tmp/px/ && sh build/ptx-one.sh /tmp/px moesum &&
	cp /tmp/px/moesum.ptx "$OUT/" && (sh build/gen-cubin.sh sm90 /tmp/sm90 /tmp/px && cp /tmp/sm90/* "$OUT/") || lg "PTX OR CUBIN FAILED"
tgroup 0 'TestMoERouting$' 170
tgroup 1 'TestMoERoutingIDSumR1' 170
ds2_tests 170 >>"$OUT/log.txt"
wait
gsum tests 0 1
cp /tmp/g0.log /tmp/g1.log "$OUT/" 2>/dev/null
while pgrep -f "ember synth" >/dev/null; do sleep 1; done
sweep 3 v2 "EMBER_CUDA_IDSUM=0 $E" "$E" "EMBER_CUDA_IDSUM=r1 $E" 2>&1 | tee -a "$OUT/log.txt"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 100 >"$OUT/clocks.csv" 2>&1 &
CK=$!
lg "V2-Lite tg128 -r 3 $(tg3 v2 v2)"
kill $CK
lg done
