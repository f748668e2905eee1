#!/bin/sh
# s42-call3.sh: mmv_route_q4_k variants. B: the activation values loaded before warp 0
# routes (the source as committed after call 2's, R 4 rows a task, one task ahead);
# C: R 2, two tasks ahead (ROUTE_R=2 ROUTE_D=2; 128 registers), at 3 and 4 blocks an SM
# (EMBER_CUDA_ROUTE_BLOCKS); E: R 3, two ahead. TestMoERouting on each first (three at
# once), then V2-Lite tg128 against call 2's moe.ptx (embedded) and moe_topk + mmv_id,
# alternating. bin/dev: TESTS="cuda"; testdata/golden's deepseek2 files only.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s42c3}"
sh build/ptx-copy.sh /tmp/pb moe || el "PTX FAILED"
for v in "c -DROUTE_R=2 -DROUTE_D=2" "e -DROUTE_R=3 -DROUTE_D=2"; do
	set -- $v
	d=/tmp/p$1
	shift
	rm -rf $d && cp -r /tmp/pb $d && sh build/ptx-one.sh $d moe "$@" || el "PTX $d FAILED"
done
for d in b c e; do cp /tmp/p$d/moe.ptx "$L/moe-$d.ptx"; done
el "ptx done"
for d in b c e; do
	(cd inference/backend/cuda && EMBER_CUDA_PTX_DIR=/tmp/p$d timeout -s KILL 150 "$R/bin/dev/cuda.test" -test.run 'TestMoERouting|TestConformance/MatMul/Q4_K' 2>&1 | tail -3 | sed "s/^/$d: /") &
done
wait
el "tests done"
b() { q env $1 $E bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/v2.gguf; }
for r in 1 2 3; do
	el "v2 tg128: call2 $(b "EMBER_CUDA_ROUTE_BLOCKS=3") B $(b "EMBER_CUDA_PTX_DIR=/tmp/pb") C3 $(b "EMBER_CUDA_PTX_DIR=/tmp/pc") C4 $(b "EMBER_CUDA_PTX_DIR=/tmp/pc EMBER_CUDA_ROUTE_BLOCKS=4") E $(b "EMBER_CUDA_PTX_DIR=/tmp/pe") unfused $(b "EMBER_CUDA_NO_ROUTE_FUSE=1")"
done
