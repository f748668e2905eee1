#!/bin/bash
# route-gpu.sh (session 27): every module's PTX made again from the sources (common.cuh
# gained mmv_wide; moe.cu moe_route and the block-wide moe_topk) into $OUT/ptx.tar, each
# body compared with the committed one; the routing, fusion and DeepSeek tests and the
# goldens on it; DeepSeek-V2-Lite tg128 with moe_route, with moe_topk after the product
# (moe_route's entry renamed away in a copy of the PTX), and with moe_route left out.
# ~6 minutes. Carry bin/dev (build/dev-build.sh).
set -u
MODELS="v2"
. build/gpu-setup.sh /tmp/route-gpu
P=/tmp/ptx
rm -rf $P && mkdir -p $P && cp kernels/cuda/*.cu kernels/cuda/*.cuh $P/
(cd $P && for cu in *.cu; do
	(m=${cu%.cu}; nvcc -arch=sm_90 -ptx -O3 -fmad=false -o /tmp/$m.ptx $cu &&
		{ echo "// ember-sources-sha256: $(cat $cu $(LC_ALL=C ls *.cuh) | sha256sum | cut -d' ' -f1)"; cat /tmp/$m.ptx; } >$m.ptx) &
done; wait)
for f in $P/*.ptx; do
	b=$(basename $f)
	if cmp -s <(tail -n +2 $f) <(tail -n +2 kernels/cuda/$b); then echo "$b: body unchanged"; else echo "$b: body differs ($(diff <(tail -n +2 $f) <(tail -n +2 kernels/cuda/$b) | grep -c '^[<>]') lines)"; fi
done
tar -C $P -cf "$L/ptx.tar" $(cd $P && ls *.ptx)
export EMBER_CUDA_PTX_DIR=$P
wait
(cd inference/backend/cuda && timeout -s KILL 200 "$R/bin/dev/cuda.test" -test.run 'TestMoERouting|TestKernel|TestMatVec|TestFused|TestConformance|TestBranched' -test.v >"$L/cuda.log" 2>&1; echo "cuda tests rc $?") &
(cd inference/model/deepseek2 && timeout -s KILL 200 "$R/bin/dev/deepseek2.test" >"$L/ds2.log" 2>&1; echo "deepseek2 tests rc $?") &
(cd inference/model/archs && timeout -s KILL 200 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA' >"$L/goldens.log" 2>&1; echo "goldens rc $?") &
wait
grep -E "^--- FAIL|^ok|^PASS|^FAIL|panic|TestMoERouting" "$L"/*.log | head -30
Q=/tmp/ptx-noroute
rm -rf $Q && cp -r $P $Q && sed -i 's/\.entry moe_route(/.entry moe_routeX(/' $Q/moe.ptx
for r in 1 2; do
	echo "v2 tg128 moe_route $(q "$E" bench -backend cuda -m /tmp/v2.gguf -p 0 -n 128 -r 3)"
	echo "v2 tg128 moe_topk $(EMBER_CUDA_PTX_DIR=$Q q "$E" bench -backend cuda -m /tmp/v2.gguf -p 0 -n 128 -r 3)"
	echo "v2 tg128 no routing $(EMBER_CUDA_SKIP='moe_route$' q "$E" bench -backend cuda -m /tmp/v2.gguf -p 0 -n 128 -r 3)"
done
echo "v2 greedy md5 $(timeout -s KILL 100 "$E" run -backend cuda -m /tmp/v2.gguf -p 'The quick brown fox' -n 32 -temp 0 2>/dev/null | md5sum)"
echo "v2 64 streams $(s "$E" bench -m /tmp/v2.gguf -backend cuda -streams 64 -p 512 -n 128)"
