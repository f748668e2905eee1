#!/bin/sh
# ptx-copy.sh DIR [MODULE ...]: kernels/cuda's sources and committed PTX (if the tree
# holds it: a call's carry may leave it out) copied into DIR (emptied first), then the
# named modules (every .cu without names) compiled there by
# ptx-one.sh, in parallel, for runs that load DIR's PTX (EMBER_CUDA_PTX_DIR). A module
# that does not compile is named with the end of its errors, and the status is 1.
set -u
d=$1
shift
rm -rf "$d" && mkdir -p "$d" && cp kernels/cuda/*.cu kernels/cuda/*.cuh "$d/" || exit 1
for f in kernels/cuda/*.ptx; do [ -e "$f" ] && cp "$f" "$d/"; done
ms=${*:-$(cd "$d" && ls *.cu | sed 's/\.cu$//')}
for m in $ms; do
	(sh build/ptx-one.sh "$d" "$m" 2>"$d/$m.log" || { echo "$m.cu does not compile"; tail -5 "$d/$m.log"; touch "$d/$m.failed"; }) &
done
wait
! ls "$d"/*.failed >/dev/null 2>&1
