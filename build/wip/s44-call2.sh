#!/bin/sh
# s44-call2.sh WEVICT ROLL (written in session 43, not run): lands what s44-call1.sh
# finds. Applies wevict.patch, moe-roll.patch and argmax-reduce.patch, sets mv1.cuh's
# EMBER_WEVICT default to WEVICT (1 or 2; 0 leaves it off) and moe.cu's MOE_ROLL to ROLL
# (0 or 1), makes every module's PTX ($OUT/ptx.tar.xz: mv1.cuh and sample.cuh are
# headers, so every hash changes), runs the backend's product, routing, sampling and
# conformance tests, all CUDA goldens and deepseek2's CUDA tests on it, then 8B Q4_K_M
# and Q8_0 and V2-Lite tg128, pp512 and 64 streams against bin/base (main's binary),
# alternating. If all pass and it gains: apply the same patches and defaults here, copy
# every .ptx from the tarball into kernels/cuda, run go test ./kernels/cuda and commit.
#
# Here, before the call (as s43-prep.sh 1 does, with these patches and defaults):
#   mkdir -p bin/base && go build -tags nogui -ldflags='-s -w' -o bin/base/ember . && xz -f bin/base/ember
#   apply the three patches, set the two defaults, TESTS="cuda archs deepseek2" sh build/dev-build.sh, revert
#   move testdata/vocab, testdata/tokenizers and kernels/cuda/*.ptx out; carry bin/dev, bin/base
set -u
W=${1:-1} M=${2:-1}
for p in wevict moe-roll argmax-reduce; do
	{ git apply build/wip/$p.patch || patch -p1 -s <build/wip/$p.patch; } || { echo "$p.patch does not apply"; exit 1; }
done
sed -i "s/^#define EMBER_WEVICT 0\$/#define EMBER_WEVICT $W/" kernels/cuda/mv1.cuh
sed -i "s/^#define MOE_ROLL 0\$/#define MOE_ROLL $M/" kernels/cuda/moe.cu
grep -n '^#define EMBER_WEVICT\|^#define MOE_ROLL' kernels/cuda/mv1.cuh kernels/cuda/moe.cu
export MODELS="q4 q8 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s44c2}"
base_bin
ptx_tests 'MatMul|MMQ|MMV|MatVec|Products|IDW|F16Cop|SwiGLUQ8|MoERouting|HeadProducts|ArgMax|TopK|SampleAhead|KernelNamesExist|EmbeddedKernelsWait' # every module's PTX ($OUT/ptx.tar.xz) and the tests on it
t() { q env $1 bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/$2.gguf; }
for r in 1 2 3; do el "tg128 new/main: q4 $(t "$N" q4) / $(t "$B" q4); v2 $(t "$N" v2) / $(t "$B" v2)"; done
el "q8 tg128 new/main: $(t "$N" q8) / $(t "$B" q8)"
el "q4 pp512 new/main: $(p env $N bench -backend cuda -p 512 -n 0 -r 1 -m /tmp/q4.gguf) / $(p "$B" bench -backend cuda -p 512 -n 0 -r 1 -m /tmp/q4.gguf)"
el "64 streams new/main: q4 $(s env $N bench -backend cuda -streams 64 -p 512 -n 128 -m /tmp/q4.gguf) / $(s "$B" bench -backend cuda -streams 64 -p 512 -n 128 -m /tmp/q4.gguf)"
el "64 streams new/main: v2 $(s env $N bench -backend cuda -streams 64 -p 512 -n 128 -m /tmp/v2.gguf) / $(s "$B" bench -backend cuda -streams 64 -p 512 -n 128 -m /tmp/v2.gguf)"
