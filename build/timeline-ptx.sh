#!/bin/sh
# timeline-ptx.sh DIR: every module's PTX in DIR (emptied first) for the timeline
# (EMBER_CUDA_TIMELINE, inference/backend/cuda/timeline.go): kernels/cuda's sources with
# common.cuh's pdl_wait recording each kernel's wait (build/timeline-cuh.py), compiled
# by ptx-one.sh in parallel. Load it with EMBER_CUDA_PTX_DIR=DIR. Needs nvcc and python3.
set -u
d=$1
rm -rf "$d" && mkdir -p "$d" && cp kernels/cuda/*.cu kernels/cuda/*.cuh "$d/" || exit 1
python3 build/timeline-cuh.py "$d/common.cuh" || exit 1
for m in $(cd "$d" && ls *.cu | sed 's/\.cu$//'); do
	(sh build/ptx-one.sh "$d" "$m" 2>"$d/$m.log" || { echo "$m.cu does not compile"; tail -5 "$d/$m.log"; touch "$d/$m.failed"; }) &
done
wait
! ls "$d"/*.failed >/dev/null 2>&1
