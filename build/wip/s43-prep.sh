#!/bin/sh
# s43-prep.sh CALL: the local steps before s43-call1.sh or s43-call2.sh (written in
# session 42): applies the call's patches, builds bin/dev (and for call 1 bin/base from
# the unpatched tree), reverts the patches, and moves testdata/vocab, testdata/tokenizers
# and kernels/cuda/*.ptx to /tmp/s43-hold (the carry's 64 MiB; the device makes the PTX).
# `sh build/wip/s43-prep.sh restore` puts them back. Run from the repository root.
set -eu
H=/tmp/s43-hold
case ${1:-} in
restore)
	mv $H/vocab $H/tokenizers testdata/ && mv $H/ptx/*.ptx kernels/cuda/ && rmdir $H/ptx $H
	git status --short
	exit 0
	;;
1) ps="q5pack-idwq" ;;
2) ps="q5pack-idwq idsq q4x" ;;
*) echo "usage: s43-prep.sh 1|2|restore" >&2 && exit 2 ;;
esac
[ -z "$(git status --short --untracked-files=no)" ] || { echo "s43-prep.sh: the tree has changes" >&2; exit 1; }
if [ "$1" = 1 ]; then
	mkdir -p bin/base && CGO_ENABLED=1 go build -tags nogui -ldflags='-s -w' -o bin/base/ember . && xz -f bin/base/ember
fi
for p in $ps; do git apply build/wip/$p.patch; done
TESTS="cuda archs deepseek2" sh build/dev-build.sh || true
git checkout -q -- . && git clean -fdq inference kernels
mkdir -p $H/ptx && mv testdata/vocab testdata/tokenizers $H/ && mv kernels/cuda/*.ptx $H/ptx/
echo "carry: bin/dev$([ "$1" = 1 ] && echo ' bin/base'); run: sh build/wip/s43-call$1.sh; then: sh build/wip/s43-prep.sh restore"
