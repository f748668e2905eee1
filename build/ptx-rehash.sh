#!/bin/sh
# ptx-rehash.sh [MODULE ...]: rewrites the first line of kernels/cuda's PTX files (every
# module, or those named) to the sha256 of their sources as ptx-one.sh computes it (X.cu
# and every *.cuh in name order). Only for a module whose PTX body cannot have changed:
# a header added or edited that the module's .cu does not include (every module's hash
# covers every header, so a new header changes them all). A changed module's PTX is made
# again on a GPU machine (ptx-copy.sh), not rehashed.
set -eu
cd "$(dirname "$0")/../kernels/cuda"
ms=${*:-$(ls *.ptx | sed 's/\.ptx$//')}
for m in $ms; do
	h=$(cat "$m.cu" $(LC_ALL=C ls *.cuh) | sha256sum | cut -d" " -f1)
	{ echo "// ember-sources-sha256: $h"; tail -n +2 "$m.ptx"; } >"$m.ptx.new"
	mv "$m.ptx.new" "$m.ptx"
done
