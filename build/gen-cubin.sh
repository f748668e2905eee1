#!/bin/sh
# gen-cubin.sh SET [DIR [PTXDIR]]: the machine code of a kernel set, compiled by ptxas
# from the committed PTX (sm90: or PTXDIR's *.ptx, e.g. ptx-copy.sh's directory on the
# GPU machine, every module's PTX there), so that a first start on those GPUs loads it
# instead of waiting for the driver to compile the PTX (~45 s for the Hopper set on an
# H100's host, ~30 s for the compatibility set). SET sm90: kernels/cuda/*.ptx for compute capability 9.0 (sm_90a for
# mmg), needs CUDA 13's ptxas (the GPU machine: the PTX is ISA 9.0); SET sm80:
# kernels/cuda/sm80/*.ptx.gz for 8.0, which 8.6 and 8.9 run too (CUDA 12.4's ptxas will
# do: build/local-nvcc.sh). Writes DIR/MODULE.cubin.gz (default kernels/cuda/SET) and
# DIR/cubins.txt: a line "MODULE SHA256" each, the sha256 of the PTX without its first
# line (the sources' hash, which build/ptx-rehash.sh may rewrite), which kernels/cuda
# checks before it hands a cubin out.
set -eu
cd "$(dirname "$0")/.."
set=$1
command -v ptxas >/dev/null || { echo "gen-cubin.sh: no ptxas (the GPU machine's CUDA, or build/local-nvcc.sh's /opt/bin)" >&2 && exit 1; }
out=$(realpath -m "${2:-kernels/cuda/$set}")
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
case $set in
sm90) for f in "${3:-kernels/cuda}"/*.ptx; do tail -n +2 "$f" >"$tmp/$(basename "$f")"; done ;;
sm80) for f in kernels/cuda/sm80/*.ptx.gz; do gzip -dc "$f" | tail -n +2 >"$tmp/$(basename "$f" .gz)"; done ;;
*) echo "gen-cubin.sh: SET is sm90 or sm80" >&2 && exit 2 ;;
esac
for f in "$tmp"/*.ptx; do
	m=$(basename "$f" .ptx)
	arch=sm_${set#sm}
	[ "$m" = mmg ] && arch=sm_90a
	(ptxas -arch=$arch -O3 -o "$tmp/$m.cubin" "$f" 2>"$tmp/$m.err" || { echo "$m: $(head -3 "$tmp/$m.err")"; touch "$tmp/$m.failed"; }) &
done
wait
if ls "$tmp"/*.failed >/dev/null 2>&1; then
	echo "gen-cubin.sh: ptxas failed; nothing written" >&2
	exit 1
fi
rm -f "$out"/*.cubin.gz "$out/cubins.txt"
for f in "$tmp"/*.ptx; do
	m=$(basename "$f" .ptx)
	gzip -n -9 -c "$tmp/$m.cubin" >"$out/$m.cubin.gz"
	echo "$m $(sha256sum <"$f" | cut -d' ' -f1)" >>"$out/cubins.txt"
done
echo "$set: $(ls "$out"/*.cubin.gz | wc -l) cubins, $(du -cb "$out"/*.cubin.gz | tail -1 | cut -f1) bytes"
