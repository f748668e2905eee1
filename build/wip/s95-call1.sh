# s95-call1.sh (session 95): (1) s94-call2.sh's micro (build/micro/mvq.cu, the shares
# copied before the wait, loads as ld.shared / ld.global, FW, STAMP), trimmed; (2) the
# engine form (kernels/cuda/mvq.cu, $EMBER_CUDA_MVQ) on fresh PTX (ptx_all, with the
# cubins): its bits against mv1 (TestMatVecCopiedBits), greedy tokens of the 8B with
# and without it, tg128 A/B on the 8B and V2-Lite, then TestMatVecCopied (against ref).
# Needs bin/dev (TESTS=cuda) and the plain hold-out; returns mvq.ptx and the cubins.
# (The engine form is build/wip/mvq-engine.patch now: apply it, with its PTX, to rerun.)
set -u
MODELS="q4 v2" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
(ptx_all /tmp/px >/tmp/ptx.log 2>&1; cubin_all /tmp/px >>/tmp/ptx.log 2>&1; echo "ptx+cubins done" >>/tmp/ptx.log) &
PXJ=$!
(cd build/micro && nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/mvq mvq.cu 2>&1 | grep -iE "error|warning") | tee -a "$OUT/log.txt"
lg "micro built"
r() { lg "== $*"; env "$@" timeout 60 /tmp/mvq 2>&1 | tee -a "$OUT/log.txt"; }
r GAP=3000
r GAP=3000 FW=396
r GAP=3000 FW=0
r GAP=0 FW=396
r GAP=3000 MV1=27 FW=396
r GAP=3000 MV1=23 FW=396
r GAP=3000 STAMP=1 ROUNDS=1 FW=396
lg "micro done"
wait $PXJ
cat /tmp/ptx.log | tail -5 | tee -a "$OUT/log.txt"
cp /tmp/px/mvq.ptx "$OUT/" 2>/dev/null
wait # the models
ls -la /tmp/q4.gguf /tmp/v2.gguf | tee -a "$OUT/log.txt"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMatVecCopiedBits' 150
wait
gsum bits 0
for m in 0 1; do
	EMBER_CUDA_MVQ=$m timeout -s KILL 60 "$E" run -m /tmp/q4.gguf -backend cuda -p "Once upon a time" -n 48 >/tmp/run$m.txt 2>&1
	lg "8B greedy MVQ=$m: $(md5sum </tmp/run$m.txt | cut -c1-12) $(wc -c </tmp/run$m.txt) bytes"
done
cmp -s /tmp/run0.txt /tmp/run1.txt && lg "greedy output same" || lg "greedy output DIFFERS"
unset EMBER_CUDA_PTX_DIR
N="EMBER_CUDA_PTX_DIR=/tmp/px $E"
ab 3 q4 "$N" "EMBER_CUDA_MVQ=1 $N" 2>&1 | tee -a "$OUT/log.txt"
ab 3 v2 "$N" "EMBER_CUDA_MVQ=1 $N" 2>&1 | tee -a "$OUT/log.txt"
lg "8B MVQ=20000: $(tg1 q4 "EMBER_CUDA_MVQ=20000 $N")"
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 1 'TestMatVecCopied$|TestMVQ' 120
wait
gsum ref 1
lg done
