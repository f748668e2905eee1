#!/bin/sh
# s44-prep.sh 1 | 2 WEVICT ROLL | restore: the local steps before s44-call1.sh and
# s44-call2.sh (written in session 43), from the repository root. 1: bin/dev from main
# (TESTS="cuda deepseek2"); testdata/vocab and testdata/tokenizers to /tmp/s44-hold (the
# carry's 64 MiB; call 1 needs the committed PTX in the tree). 2: bin/base from main,
# bin/dev (TESTS="cuda archs deepseek2") from main with wevict, moe-roll and
# argmax-reduce applied and the two defaults set, then reverted; the vocabularies and
# kernels/cuda/*.ptx to /tmp/s44-hold (the device makes every module's PTX). restore
# puts them back. Carry: call 1 bin/dev; call 2 bin/dev and bin/base.
set -eu
H=/tmp/s44-hold
case ${1:-} in
restore)
	mv $H/vocab $H/tokenizers testdata/
	if [ -d $H/ptx ]; then mv $H/ptx/*.ptx kernels/cuda/ && rmdir $H/ptx; fi
	rmdir $H
	git status --short
	exit 0
	;;
1 | 2) ;;
*) echo "usage: s44-prep.sh 1 | 2 WEVICT ROLL | restore" >&2 && exit 2 ;;
esac
[ -z "$(git status --short --untracked-files=no)" ] || { echo "s44-prep.sh: the tree has changes" >&2; exit 1; }
rm -rf bin/dev bin/base
if [ "$1" = 1 ]; then
	TESTS="cuda deepseek2" sh build/dev-build.sh
else
	mkdir -p bin/base && CGO_ENABLED=1 go build -tags nogui -ldflags='-s -w' -o bin/base/ember . && xz -f bin/base/ember
	for p in wevict moe-roll argmax-reduce; do git apply build/wip/$p.patch; done
	sed -i "s/^#define EMBER_WEVICT 0\$/#define EMBER_WEVICT ${2:-1}/" kernels/cuda/mv1.cuh
	sed -i "s/^#define MOE_ROLL 0\$/#define MOE_ROLL ${3:-1}/" kernels/cuda/moe.cu
	TESTS="cuda archs deepseek2" sh build/dev-build.sh || true # the stale-PTX warning is expected
	git checkout -q -- .
fi
mkdir -p $H && mv testdata/vocab testdata/tokenizers $H/
if [ "$1" = 2 ]; then mkdir -p $H/ptx && mv kernels/cuda/*.ptx $H/ptx/; fi
echo "carry: bin/dev$([ "$1" = 2 ] && echo ' bin/base'); run: sh build/wip/s44-call$1.sh${2:+ $2 ${3:-1}}; then: sh build/wip/s44-prep.sh restore"
