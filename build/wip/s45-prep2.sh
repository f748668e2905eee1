#!/bin/sh
# s45-prep2.sh: the local step before s45-call2.sh: bin/dev (TESTS="cuda archs
# deepseek2") from the tree with the kernel edits (Go unchanged: the binaries embed the
# committed PTX, the call's "committed" side), then testdata/vocab, testdata/tokenizers
# and kernels/cuda/*.ptx to /tmp/s45-hold. After the call: sh build/wip/s45-prep.sh restore.
set -eu
H=/tmp/s45-hold
rm -rf bin/dev bin/base
TESTS="cuda archs deepseek2" sh build/dev-build.sh || true # the stale-PTX warning is expected
mkdir -p $H/ptx && mv testdata/vocab testdata/tokenizers $H/ && mv kernels/cuda/*.ptx $H/ptx/
echo "carry: bin/dev; run: sh build/wip/s45-call2.sh; then: sh build/wip/s45-prep.sh restore"
