#!/bin/sh
# s46-prep.sh 1 | restore (written in session 45): the local steps around s46-call1.sh,
# from the repository root. 1: bin/dev (TESTS="cuda archs deepseek2", embedding the
# committed PTX: the call's "committed" side) from the clean tree; testdata/vocab,
# testdata/tokenizers and kernels/cuda/*.ptx to /tmp/s46-hold (the carry's 64 MiB: the
# device makes every module's PTX); then build/wip/topk-rank.patch applied to moe.cu.
# restore takes the patch back out and puts the files back (keep the call's moe.ptx
# first if it is to land: tar xJf .../ptx.tar.xz -C /tmp/s46-ptx moe.ptx).
set -eu
H=/tmp/s46-hold
case ${1:-} in
restore)
	git checkout -- kernels/cuda/moe.cu
	mv $H/vocab $H/tokenizers testdata/ && mv $H/ptx/*.ptx kernels/cuda/ && rmdir $H/ptx $H
	touch kernels/cuda/*.ptx # mtimes only: the PTX check reads hashes
	git status --short
	exit 0
	;;
1) ;;
*) echo "usage: s46-prep.sh 1 | restore" >&2 && exit 2 ;;
esac
[ -z "$(git status --short --untracked-files=no)" ] || { echo "s46-prep.sh: the tree has changes" >&2; exit 1; }
rm -rf bin/dev bin/base
TESTS="cuda archs deepseek2" sh build/dev-build.sh
mkdir -p $H/ptx && mv testdata/vocab testdata/tokenizers $H/ && mv kernels/cuda/*.ptx $H/ptx/
git apply build/wip/topk-rank.patch
echo "carry: bin/dev; run: sh build/wip/s46-call1.sh; then: sh build/wip/s46-prep.sh restore"
