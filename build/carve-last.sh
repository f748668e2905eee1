set -u
MODELS="q4 v2"
. build/gpu-setup.sh /tmp/last
wait
q() { timeout -s KILL 60 "$@" 2>&1 | grep '^| ' | tail -2 | cut -d'|' -f7,8 | tr '\n' ' '; }
s() { timeout -s KILL 60 "$@" 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f6; }
echo "8B pp512 default $(q $E bench -backend cuda -m /tmp/q4.gguf -p 512 -n 0 -r 3)"
echo "8B pp512 off     $(EMBER_CUDA_CARVEOUT=off q $E bench -backend cuda -m /tmp/q4.gguf -p 512 -n 0 -r 3)"
echo "v2 64 streams default $(s $E bench -m /tmp/v2.gguf -backend cuda -streams 64 -p 512 -n 128)"
echo "v2 64 streams off     $(EMBER_CUDA_CARVEOUT=off s $E bench -m /tmp/v2.gguf -backend cuda -streams 64 -p 512 -n 128)"
echo "v2 pp512 default $(q $E bench -backend cuda -m /tmp/v2.gguf -p 512 -n 0 -r 3)"
echo "v2 pp512 off     $(EMBER_CUDA_CARVEOUT=off q $E bench -backend cuda -m /tmp/v2.gguf -p 512 -n 0 -r 3)"
