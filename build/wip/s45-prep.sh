#!/bin/sh
# s45-prep.sh 1 | restore: the local steps around s45-call1.sh (written in session 44),
# from the repository root. 1: bin/dev (TESTS="cuda archs deepseek2", embedding the
# committed PTX) from a clean tree; testdata/vocab, testdata/tokenizers and
# kernels/cuda/*.ptx to /tmp/s45-hold (the carry's 64 MiB: the binaries embed the PTX).
# restore puts them back. Carry: bin/dev.
set -eu
H=/tmp/s45-hold
case ${1:-} in
restore)
	mv $H/vocab $H/tokenizers testdata/ && mv $H/ptx/*.ptx kernels/cuda/ && rmdir $H/ptx $H
	touch kernels/cuda/*.ptx # mtimes only: the PTX check reads hashes
	git status --short
	exit 0
	;;
1) ;;
*) echo "usage: s45-prep.sh 1 | restore" >&2 && exit 2 ;;
esac
[ -z "$(git status --short --untracked-files=no)" ] || { echo "s45-prep.sh: the tree has changes" >&2; exit 1; }
rm -rf bin/dev bin/base
TESTS="cuda archs deepseek2" sh build/dev-build.sh
mkdir -p $H/ptx && mv testdata/vocab testdata/tokenizers $H/ && mv kernels/cuda/*.ptx $H/ptx/
echo "carry: bin/dev; run: sh build/wip/s45-call1.sh; then: sh build/wip/s45-prep.sh restore"
