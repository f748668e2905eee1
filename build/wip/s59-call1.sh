#!/bin/sh
# s59-call1.sh (for session 59): the first timeline of a decode step on the H200
# (inference/backend/cuda/timeline.go, written in session 58, never run on a GPU). Every
# module's PTX with the recording pdl_wait (build/timeline-ptx.sh) into /tmp/tl; then
# tg64 of V2-Lite and the 8B with EMBER_CUDA_TIMELINE at batches 40 and 41 (decode
# steps' graph replays: the bench's stats line shows the batches), the reports into
# $OUT/tl_MODEL_N.log; the summaries' heads printed; and the same runs on the committed
# PTX for the recording's own cost. Local steps: bin/dev (TESTS="cuda"); the usual held
# out files; carry bin/dev.
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s59c1}"
sh build/timeline-ptx.sh /tmp/tl || el "TIMELINE PTX FAILED"
wait
for m in v2 q4; do
	for n in 40 41; do
		EMBER_CUDA_PTX_DIR=/tmp/tl EMBER_CUDA_TIMELINE=$n EMBER_CUDA_STATS=1 timeout -s KILL 120 $E bench -backend cuda -p 0 -n 64 -r 1 \
			-m /tmp/$m.gguf >"$L/tl_${m}_$n.log" 2>&1
		el "$m batch $n: $(grep -c . "$L/tl_${m}_$n.log") lines; $(grep 'cuda timeline' "$L/tl_${m}_$n.log")"
		grep -A14 '^kernel  *count' "$L/tl_${m}_$n.log"
	done
	el "$m tg64 timeline PTX / committed: $(q env EMBER_CUDA_PTX_DIR=/tmp/tl $E bench -backend cuda -p 0 -n 64 -r 1 -m /tmp/$m.gguf) / $(q $E bench -backend cuda -p 0 -n 64 -r 1 -m /tmp/$m.gguf)"
done
el done
