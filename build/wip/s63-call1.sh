#!/bin/sh
# s63-call1.sh (session 63): every module's PTX made from the tree (common.cuh's
# rms_scale: each body should be the committed one, only the hash line new); what a
# decode step's host copies cost: tg128 with EMBER_CUDA_STATS, then rotated rounds of
# the tree against EMBER_CUDA_DROP_WRITES=3 (build/wip/drop-writes.patch: the small host
# writes dropped once three graphs have replayed) and with EMBER_CUDA_DROP_READS=1 too
# (the ids' copy to the host dropped as well). Wrong tokens; the chain's timing.
set -u
export MODELS="v2 q4"
. build/gpu-setup.sh "${OUT:-/tmp/s63c1}"
ptx_all /tmp/px
wait
same_bodies /tmp/px
el "models ready"
for m in q4 v2; do
	for side in "" "EMBER_CUDA_DROP_WRITES=3 EMBER_CUDA_DROP_READS=1"; do
		env EMBER_CUDA_STATS=1 $side timeout -s KILL 100 "$E" bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$m.gguf >"$L/stats_$m.log" 2>&1
		el "$m [$side]: $(grep -E 'device \(events' "$L/stats_$m.log" | tail -1)"
		grep '^| ' "$L/stats_$m.log" | tail -1
	done
done
D="EMBER_CUDA_DROP_WRITES=3 $E"
DR="EMBER_CUDA_DROP_WRITES=3 EMBER_CUDA_DROP_READS=1 $E"
sweep 5 q4 "$E" "$D" "$DR"
sweep 5 v2 "$E" "$D" "$DR"
el done
