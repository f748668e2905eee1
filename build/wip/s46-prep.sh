#!/bin/sh
# s46-prep.sh 1 | restore (written in session 45): the local steps around s46-call1.sh,
# from the repository root. 1: s45-prep.sh 1 (bin/dev with TESTS="cuda archs deepseek2"
# from the clean tree, embedding the committed PTX: the call's "committed" side;
# testdata/vocab, testdata/tokenizers and kernels/cuda/*.ptx to /tmp/s45-hold, the
# device making every module's PTX), then build/wip/topk-rank.patch applied to moe.cu
# and sample-comment.patch to sample.cu (argmax_block4's comment back above it; no code
# change). restore takes the patches back out and runs s45-prep.sh restore (keep the
# call's moe.ptx and sample.ptx first if they are to land: tar xJf .../ptx.tar.xz -C
# /tmp/s46-ptx moe.ptx sample.ptx).
set -eu
case ${1:-} in
restore) git checkout -- kernels/cuda/moe.cu kernels/cuda/sample.cu && exec sh build/wip/s45-prep.sh restore ;;
1) sh build/wip/s45-prep.sh 1 && git apply build/wip/topk-rank.patch build/wip/sample-comment.patch ;;
*) echo "usage: s46-prep.sh 1 | restore" >&2 && exit 2 ;;
esac
echo "carry: bin/dev; run: sh build/wip/s46-call1.sh; then: sh build/wip/s46-prep.sh restore"
