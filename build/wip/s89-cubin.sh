# s89-cubin.sh: how long a cold start (empty driver compute cache) takes when the modules
# come as sm_90 cubins (nvcc -cubin, named .ptx in EMBER_CUDA_PTX_DIR so the loader takes
# them; pdlKernels finds no text in them, so nothing launches as a programmatic
# dependent) against the embedded PTX the driver compiles. Sizes of the cubins.
set -u
MODELS=none . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
rm -rf /tmp/cb && mkdir -p /tmp/cb && cp kernels/cuda/*.cu kernels/cuda/*.cuh /tmp/cb/
cd /tmp/cb
for cu in *.cu; do
	m=${cu%.cu}; a=sm_90; [ $m = mmg ] && a=sm_90a
	(nvcc -arch=$a -cubin -O3 -fmad=false -o $m.ptx $cu 2>$m.log || echo "$m failed") &
done
wait
cd "$R"
lg "cubins: $(du -cb /tmp/cb/*.ptx | tail -1) ; gz $(cat /tmp/cb/*.ptx | gzip -9 | wc -c)"
ld() { timeout -s KILL 120 env "$@" "$E" bench -backend cuda -p 0 -n 16 -r 1 2>&1 | grep -E '^load|tg16' | tr '\n' ' '; }
for r in 1 2; do lg "cold cubin: $(ld CUDA_CACHE_DISABLE=1 EMBER_CUDA_PTX_DIR=/tmp/cb)"; done
lg "cold ptx: $(ld CUDA_CACHE_DISABLE=1)"
lg done
