# s89-load.sh: module loads in parallel (build/wip/parallel-load.patch applied before
# dev-build.sh) against one after another (EMBER_CUDA_SERIAL_LOAD=1), with the driver's
# compute cache off (CUDA_CACHE_DISABLE=1: every start compiles the PTX, as a first start
# does) and on (warm, the second start), on the Hopper kernels and the compatibility
# kernels: the bundled stories260K, `bench -p 0 -n 1`'s load line (backend start and
# model), three rounds. ~60 s.
set -u
MODELS=none . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
ld() { timeout -s KILL 120 env "$@" "$E" bench -backend cuda -p 0 -n 1 -r 1 2>&1 | grep '^load' | cut -d' ' -f2; }
for r in 1 2 3; do
	for ks in "" "EMBER_CUDA_COMPAT=1"; do
		lg "round $r ${ks:-hopper} cold: serial $(ld $ks CUDA_CACHE_DISABLE=1 EMBER_CUDA_SERIAL_LOAD=1) parallel $(ld $ks CUDA_CACHE_DISABLE=1); warm: serial $(ld $ks EMBER_CUDA_SERIAL_LOAD=1) parallel $(ld $ks)"
	done
done
