#!/bin/sh
# s46-call3.sh (session 46): mmv_route_q4_k_bulk (route_bulk.go; the routed gate/up
# weights by bulk copies into shared memory, all of a block's chunks in flight at once)
# against mmv_route_q4_k on the same PTX (every module made here, bulk.cuh added), with
# its tests (TestMoERouting's bulk plans, the goldens and deepseek2's CUDA tests with
# EMBER_CUDA_ROUTE_BULK=1); and build/wip/alt's PTX (HEAD's sources with the comment
# fixes only: what lands if bulk loses) as $OUT/alt.tar.xz. bin/dev from the working tree.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s46c3}"
(rm -rf /tmp/pa && cp -r build/wip/alt /tmp/pa && for m in $(cd /tmp/pa && ls *.cu | sed 's/\.cu$//'); do
	(sh build/ptx-one.sh /tmp/pa $m 2>/tmp/pa/$m.log || echo "alt $m failed") &
done && wait && cd /tmp/pa && tar cJf $L/alt.tar.xz *.ptx && echo "alt ptx done") &
ptx_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'MoERouting|MMVQueuePaired|KernelNamesExist|EmbeddedKernelsWait|Widen|IDW' 300
tgroup 1 'Conformance' 300
(cd inference/model/archs && EMBER_CUDA_ROUTE_BULK=1 timeout -s KILL 300 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA' 2>&1 | tail -3 | sed 's/^/goldens bulk: /') &
(cd inference/model/deepseek2 && EMBER_CUDA_ROUTE_BULK=1 timeout -s KILL 300 "$R/bin/dev/deepseek2.test" -test.v -test.run 'CUDA' 2>&1 | grep -E -- '^(--- |ok|FAIL|PASS)' | tail -8 | sed 's/^/deepseek2 bulk: /') &
wait
el "tests done"
unset EMBER_CUDA_PTX_DIR
N="EMBER_CUDA_PTX_DIR=/tmp/px $E"
t() { q env $1 bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$2.gguf; }
for r in 1 2 3; do el "v2 tg128 bulk16/plain: $(t "EMBER_CUDA_ROUTE_BULK=1 $N" v2) / $(t "$N" v2)"; done
for b in 8 32 4; do el "v2 tg128 bulk$b: $(t "EMBER_CUDA_ROUTE_BULK=$b $N" v2)"; done
el "v2 tg128 bulk16/plain: $(t "EMBER_CUDA_ROUTE_BULK=1 $N" v2) / $(t "$N" v2)"
el "v2 greedy tokens bulk/plain: $(env EMBER_CUDA_ROUTE_BULK=1 EMBER_CUDA_PTX_DIR=/tmp/px $E run -backend cuda -m /tmp/v2.gguf -n 32 -p Hello 2>/dev/null | md5sum | cut -c1-8) / $(env EMBER_CUDA_PTX_DIR=/tmp/px $E run -backend cuda -m /tmp/v2.gguf -n 32 -p Hello 2>/dev/null | md5sum | cut -c1-8)"
