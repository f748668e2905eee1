# s100-call2.sh (session 100; run as build/s100/call1.sh, with HEAD 95d0aeb's ops.cu and moe.cu
# saved in build/s100/orig/): staged RoPE and set_row loads, K written from the rotating
# registers (ops.cu), moe_slot_sum's loads first (moe.cu). Sides, all on PTX from this machine
# ($EMBER_CUDA_PTX_DIR, the driver compiling it): p0 HEAD's ops and moe, px both new,
# pm moe new only, pr ops new only. Tests on px first (bits against the unfused ops).
set -u
MODELS="v2 q4" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
ptx_all /tmp/px
mkdir -p /tmp/ko && cp kernels/cuda/*.cuh /tmp/ko/ && cp build/s100/orig/ops.cu build/s100/orig/moe.cu /tmp/ko/
(sh build/ptx-one.sh /tmp/ko ops & sh build/ptx-one.sh /tmp/ko moe & wait)
for d in p0 pm pr; do mkdir -p /tmp/$d && cp /tmp/px/*.ptx /tmp/$d/; done
cp /tmp/ko/ops.ptx /tmp/ko/moe.ptx /tmp/p0/
cp /tmp/ko/ops.ptx /tmp/pm/
cp /tmp/ko/moe.ptx /tmp/pr/
lg "sides made: $(md5sum /tmp/p0/ops.ptx /tmp/px/ops.ptx /tmp/p0/moe.ptx /tmp/px/moe.ptx | cut -c1-8 | paste -sd' ')"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestFusedRoPE|TestFusedSetRows|TestMLAKVRoPE|TestFusedDecoderLayers|TestFusedAttention|TestConformance' 240
tgroup 1 'TestMoERouting$' 240
model_tests 240 >>"$OUT/log.txt"
wait
gsum tests 0 1
cp /tmp/g0.log /tmp/g1.log "$OUT/" 2>/dev/null
unset EMBER_CUDA_PTX_DIR
while pgrep -f "ember synth" >/dev/null; do sleep 1; done
P() { echo "EMBER_CUDA_PTX_DIR=/tmp/$1 $E"; }
tg1 v2 "$(P p0)" >/dev/null; tg1 v2 "$(P pm)" >/dev/null; tg1 v2 "$(P pr)" >/dev/null
sweep 4 v2 "$(P p0)" "$(P px)" "$(P pm)" "$(P pr)" 2>&1 | tee -a "$OUT/log.txt"
sweep 4 q4 "$(P p0)" "$(P pr)" 2>&1 | tee -a "$OUT/log.txt"
lg done
