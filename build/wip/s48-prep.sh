#!/bin/sh
# s48-prep.sh 1 | restore: the local steps around s48-call2.sh. 1: bin/base/ember from
# HEAD (a worktree: the committed code on its embedded PTX) and bin/dev from the working
# tree (its embedded PTX stale: the call makes its own); testdata/vocab,
# testdata/tokenizers and kernels/cuda/*.ptx to /tmp/s45-hold (the carry's 64 MiB).
# restore puts them back.
set -eu
case ${1:-} in
restore) exec sh build/wip/s45-prep.sh restore ;;
1) ;;
*) echo "usage: s48-prep.sh 1 | restore" >&2 && exit 2 ;;
esac
rm -rf bin/dev bin/base /tmp/s48-wt
git worktree add -f /tmp/s48-wt HEAD >/dev/null
mkdir -p bin/base
(cd /tmp/s48-wt && CGO_ENABLED=1 go build -tags nogui -ldflags='-s -w' -o /work/main/bin/base/ember .)
git worktree remove --force /tmp/s48-wt
xz -9 -T0 bin/base/ember
TESTS="cuda archs deepseek2" sh build/dev-build.sh
H=/tmp/s45-hold
mkdir -p $H/ptx && mv testdata/vocab testdata/tokenizers $H/ && mv kernels/cuda/*.ptx $H/ptx/
du -sh bin/dev bin/base
echo "carry: bin/dev, bin/base; run: sh build/wip/s48-call2.sh; then: sh build/wip/s48-prep.sh restore"
