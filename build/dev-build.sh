#!/bin/sh
# dev-build.sh: build the nogui ember binary and the CUDA test binaries (the backend's,
# the goldens', deepseek2's) into bin/dev (git-ignored), compressed to carry to a GPU
# machine that has no Go.
set -eu
cd "$(dirname "$0")/.."
mkdir -p bin/dev
export CGO_ENABLED=1
# The binaries embed kernels/cuda/*.ptx: a .ptx older than its sources (a kernel edited,
# its PTX not yet made again on a GPU machine) would launch the old kernel with the new
# arguments (session 28 lost device time to it). Say so loudly; the build goes on, for
# runs that bring fresh PTX with EMBER_CUDA_PTX_DIR.
if ! go test -count=1 -run 'TestPTXMatchesSources|TestCompatMatchesSources|TestCubinsMatchPTX' ./kernels/cuda/ >/tmp/ember-ptx-check.txt 2>&1; then
	echo "dev-build.sh: WARNING: embedded PTX is stale; use EMBER_CUDA_PTX_DIR or copy fresh PTX in and rebuild:" >&2
	grep -E "generated from other sources|made from another PTX" /tmp/ember-ptx-check.txt | sed 's/^[[:space:]]*/  /' >&2
	echo "  (stale cubins only slow a first start: the backend compiles those modules' PTX; build/gen-cubin.sh)" >&2
	echo "  (the compatibility PTX, sm80/*.ptx.gz: build/local-nvcc.sh, then PATH=/opt/bin:\$PATH build/gen-ptx-compat.sh)" >&2
fi
# TESTS picks the test binaries (default all three): the device tool carries the tracked
# tree (~50 MiB) and bin/dev in 64 MiB, so a call that needs only some of them (session
# 33's call 11 left archs.test out) builds fewer: TESTS="cuda deepseek2".
rm -f bin/dev/*.test bin/dev/*.test.xz bin/dev/*.test.gz bin/dev/ember bin/dev/ember.xz bin/dev/ember.gz
go build -tags nogui -ldflags='-s -w' -o bin/dev/ember .
out=bin/dev/ember
for t in ${TESTS:-cuda archs deepseek2}; do
	case $t in
	cuda) pkg=./inference/backend/cuda/ ;;
	archs) pkg=./inference/model/archs/ ;;
	deepseek2) pkg=./inference/model/deepseek2/ ;;
	engine) pkg=./inference/engine/ ;;
	cpu) pkg=./kernels/cpu/ ;; # the CPU kernels' tests, for the GPU machine's Xeon (AVX-512 BF16, AMX)
	*) echo "dev-build.sh: unknown test binary $t (cuda, archs, deepseek2, engine, cpu)" >&2 && exit 2 ;;
	esac
	go test -c -tags nogui -ldflags='-s -w' -o bin/dev/$t.test $pkg
	out="$out bin/dev/$t.test"
done
# xz where present: ~25% smaller than gzip, which matters when a GPU machine takes a
# limited working tree (the four binaries: ~16 MiB against ~21 MiB).
if command -v xz >/dev/null 2>&1; then
	xz -f -9 -T0 $out
else
	gzip -f -9 $out
fi
ls -la bin/dev
