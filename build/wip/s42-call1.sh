#!/bin/sh
# s42-call1.sh: written at the end of session 41 (its device time spent) for the next
# session's first call (~6-7 minutes); build bin/dev first (TESTS="cuda engine" sh
# build/dev-build.sh, carried without testdata/golden, vocab, tokenizers). Four things session 41 left:
#   1. build/micro/ffn.cu (build/ffn-gpu.sh): a layer's FFN half as one launch, down
#      taking each SwiGLU chunk as gate/up finishes it, against the engine's three
#      launches; bits checked.
#   2. build/wip/argmax4.patch (s41-call8.sh): sample.ptx made here ($OUT), the argmax,
#      feeder, sampling and engine CUDA tests on it, 8B tg128 A/B; then V2-Lite's.
#   3. One DeepSeek-V2-Lite decode step kernel by kernel under ncu (profile-cuda.sh):
#      what moe_topk and the routed products take alone, against the ~8-10 us each
#      costs the chain (NOTES.md, session 41's skip study).
#   4. build/micro/mvp.cu's L2 prefetcher with per-line prefetches (PFMODE=1) and
#      reads (PFMODE=2), beside SHARED=1 (the weights already in L2) for the bound:
#      session 41's bulk prefetches changed nothing, where L2-resident weights saved
#      0.28 ms of the micro's 1.68.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s42c1}"
(cd build/micro && nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/mvp mvp.cu 2>&1 | grep -i error) &
el "ffn micro"
GAPS="0 8000" LAGS="1" sh build/ffn-gpu.sh 2>&1 | tee "$L/ffn.txt" | grep -E 'differ|round|blocks|WRONG|gave up'
wait # the models written and /tmp/mvp built (s41-call8.sh's own setup would take a partial q4.gguf)
sh build/wip/s41-call8.sh # argmax4: the patch, sample.ptx ($OUT), its tests, 8B tg128 A/B
b() { q env $1 $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$2.gguf; }
OLD="-u EMBER_CUDA_PTX_DIR"
NEW="EMBER_CUDA_PTX_DIR=/tmp/px"
el "v2 tg128: committed $(b "$OLD" v2) argmax4 $(b "$NEW" v2)"
sh build/profile-cuda.sh "$E" /tmp/v2.gguf "$L/v2prof" -p 0 -n 32 >/dev/null 2>&1 || el "profile failed"
head -30 "$L/v2prof/summary.txt"
for m in 1 2; do
	el "prefetcher mode $m: $(NORM=5 GAP=0 PFMODE=$m PFB="132:24:256,132:40:1024,264:24:512,528:24:256" timeout -s KILL 60 /tmp/mvp | tail -2 | tr '\n' ' ')"
done
el "weights in L2: $(NORM=5 GAP=0 SHARED=1 S=6 SB=26880 timeout -s KILL 60 /tmp/mvp | tail -1)"
