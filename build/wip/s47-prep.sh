#!/bin/sh
# s47-prep.sh 1 | restore (written in session 46): the local steps around s47-call1.sh,
# from the repository root. 1: bin/base/ember from the clean tree (the call's
# "committed" side: HEAD's code on its embedded PTX); HEAD's moe.cu kept as
# build/wip/moe-head.cu (the call's idp-only PTX); then build/wip/idpre.patch and
# build/wip/topk-rank.patch applied and bin/dev (TESTS="cuda archs deepseek2") built from
# that tree (its ember launches mmv_idp_*, which the committed PTX lacks: it runs only
# with the call's PTX); testdata/vocab, testdata/tokenizers and kernels/cuda/*.ptx to
# /tmp/s45-hold (the carry's 64 MiB). restore takes the patches
# back out and puts the files back (keep the call's PTX first if it is to land:
# tar xJf .../ptx.tar.xz -C /tmp/s47-ptx).
set -eu
H=/tmp/s45-hold
case ${1:-} in
restore)
	git checkout -- inference kernels && rm -f inference/backend/cuda/idp.go inference/backend/cuda/idp_test.go build/wip/moe-head.cu
	rm -rf bin/base
	exec sh build/wip/s45-prep.sh restore # the held files back, the PTX touched
	;;
1) ;;
*) echo "usage: s47-prep.sh 1 | restore" >&2 && exit 2 ;;
esac
[ -z "$(git status --short --untracked-files=no)" ] || { echo "s47-prep.sh: the tree has changes" >&2; exit 1; }
rm -rf bin/dev bin/base
mkdir -p bin/base && CGO_ENABLED=1 go build -tags nogui -ldflags='-s -w' -o bin/base/ember . && xz -9 -T0 bin/base/ember
cp kernels/cuda/moe.cu build/wip/moe-head.cu
git apply build/wip/idpre.patch build/wip/topk-rank.patch
TESTS="cuda archs deepseek2" sh build/dev-build.sh # warns that the embedded PTX is stale: the call brings its own
mkdir -p $H/ptx && mv testdata/vocab testdata/tokenizers $H/ && mv kernels/cuda/*.ptx $H/ptx/
echo "carry: bin/dev, bin/base; run: sh build/wip/s47-call1.sh; then: sh build/wip/s47-prep.sh restore"
