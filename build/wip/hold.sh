#!/bin/sh
# hold.sh out|in [deep]: moves what a device call does not read out of the tree (to
# /tmp/held) so the tree and bin/dev fit the device tool's 64 MiB carry, or back. Plain:
# vocab, tokenizers, the PTX and every golden but deepseek2's (cuda and deepseek2 tests).
# deep: vocab, tokenizers, the PTX, sm80, sm90 and build/wip, keeping the goldens (archs
# tests beside ember). The binaries embed the kernels, so nothing moved is read there.
# Run a copy (cp build/wip/hold.sh /tmp/) from inside the repository: deep moves build/wip.
set -e
cd "$(git rev-parse --show-toplevel)"
h=/tmp/held
case "$1 ${2:-}" in
"out ")
	mkdir -p $h/golden $h/ptx
	mv testdata/vocab testdata/tokenizers $h/
	for f in testdata/golden/*; do
		case "$(basename "$f")" in deepseek2-* | README.md) ;; *) mv "$f" $h/golden/ ;; esac
	done
	mv kernels/cuda/*.ptx $h/ptx/
	;;
"in ")
	mv $h/vocab $h/tokenizers testdata/
	mv $h/golden/* testdata/golden/
	mv $h/ptx/*.ptx kernels/cuda/
	;;
"out deep")
	mkdir -p $h/ptx
	mv kernels/cuda/*.ptx $h/ptx/
	mv testdata/vocab testdata/tokenizers kernels/cuda/sm80 kernels/cuda/sm90 build/wip $h/
	;;
"in deep")
	mv $h/wip build/
	mv $h/vocab $h/tokenizers testdata/
	mv $h/sm80 $h/sm90 kernels/cuda/
	mv $h/ptx/*.ptx kernels/cuda/
	;;
*)
	echo "usage: hold.sh out|in [deep]" >&2
	exit 2
	;;
esac
git status --short | wc -l
