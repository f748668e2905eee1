set -u
MODELS="v2"
. build/gpu-setup.sh /tmp/last
wait
s() { timeout -s KILL 50 "$@" 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f6; }
echo "v2 64 streams default $(s $E bench -m /tmp/v2.gguf -backend cuda -streams 64 -p 512 -n 128)"
echo "v2 64 streams off     $(EMBER_CUDA_CARVEOUT=off s $E bench -m /tmp/v2.gguf -backend cuda -streams 64 -p 512 -n 128)"
