#!/bin/sh
# s57-call7.sh (session 57): where a decode step's chain goes on HEAD (qpe-side and
# AttentionLatent landed). For V2-Lite Q4_K_M and the 8B Q4_K_M: one EMBER_CUDA_STATS
# run (whole steps: EMBER_CUDA_CHUNK=0) whose last step's kernels are returned
# ($OUT/st_MODEL.log), then the skip table: tg128 with each kernel of that step left out
# in turn (EMBER_CUDA_SKIP=name$: wrong tokens, the chain's timing), whole runs before
# and after. Local steps: bin/dev (TESTS=cuda) from HEAD; testdata/vocab,
# testdata/tokenizers and kernels/cuda/*.ptx held out; carry bin/dev.
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s57c7}"
wait
for m in v2 q4; do
	EMBER_CUDA_STATS=1 EMBER_CUDA_CHUNK=0 timeout -s KILL 100 $E bench -backend cuda -p 0 -n 32 -r 1 -m /tmp/$m.gguf >$L/st_$m.log 2>&1
	names=$(grep 'the last batch' $L/st_$m.log | sed 's/.*kernels, [0-9]*: //' | tr ' ' '\n' | sort | uniq -c | sort -rn | awk '{print $2}')
	el "$m kernels a step: $(grep 'the last batch' $L/st_$m.log | sed 's/.*kernels, \([0-9]*\):.*/\1/'); by count: $(grep 'the last batch' $L/st_$m.log | sed 's/.*kernels, [0-9]*: //' | tr ' ' '\n' | sort | uniq -c | sort -rn | awk '{printf "%s %s, ", $2, $1}')"
	el "$m whole: $(tg1 $m $E)"
	for n in $names; do
		el "$m skip $n: $(tg1 $m "EMBER_CUDA_SKIP=$n\$ $E")"
	done
	el "$m whole: $(tg1 $m $E)"
done
el done
