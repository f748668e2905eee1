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
if ! go test -count=1 -run TestPTXMatchesSources ./kernels/cuda/ >/tmp/ember-ptx-check.txt 2>&1; then
	echo "dev-build.sh: WARNING: embedded PTX is stale; use EMBER_CUDA_PTX_DIR or copy fresh PTX in and rebuild:" >&2
	grep "generated from other sources" /tmp/ember-ptx-check.txt | sed 's/^[[:space:]]*/  /' >&2
fi
go build -tags nogui -ldflags='-s -w' -o bin/dev/ember .
go test -c -tags nogui -ldflags='-s -w' -o bin/dev/cuda.test ./inference/backend/cuda/
go test -c -tags nogui -ldflags='-s -w' -o bin/dev/archs.test ./inference/model/archs/
go test -c -tags nogui -ldflags='-s -w' -o bin/dev/deepseek2.test ./inference/model/deepseek2/
# xz where present: ~25% smaller than gzip, which matters when a GPU machine takes a
# limited working tree (the four binaries: ~15 MiB against ~21 MiB).
if command -v xz >/dev/null 2>&1; then
	xz -f -9 -T0 bin/dev/ember bin/dev/cuda.test bin/dev/archs.test bin/dev/deepseek2.test
else
	gzip -f -9 bin/dev/ember bin/dev/cuda.test bin/dev/archs.test bin/dev/deepseek2.test
fi
ls -la bin/dev
