# s84-call1.sh: attention_split1's V rows through its ring (session 84), and decode at
# depth against llama.cpp. Prepare: TESTS=cuda sh build/dev-build.sh; hold testdata's
# golden, vocab and tokenizers out; carry bin/dev and bin/llamacpp-src.tar.xz. Builds
# llama-bench in the background; makes attention_split.ptx (returned), runs the split,
# fused-attention and conformance tests on it; then 8B Q4_K_M tg128 at depth: new
# (V ring), new without it (EMBER_CUDA_NO_SPLIT_VRING), and at 4,096 / 8,192 the split
# kernel in place of attention_decD_1l (EMBER_CUDA_NO_DEC1L); a profile at 16,384;
# llama-bench's tg128 at the same depths, same file.
set -u
MODELS="q4" . build/gpu-setup.sh "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
B=/tmp/lbuild
LB=""
if [ ! -x $B/bin/llama-bench ]; then
	(
		rm -rf /tmp/lsrc && tar xJf bin/llamacpp-src.tar.xz -C /tmp
		arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.')
		nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
		cmake -S /tmp/lsrc -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON \
			-DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="$arch" -DGGML_NATIVE=ON \
			-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
			-DLLAMA_BUILD_APP=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF >"$L/cmake.txt" 2>&1 &&
			nice -n 19 timeout -s KILL 400 cmake --build $B --target llama-bench -j 12 >"$L/build.txt" 2>&1
		el "llama-bench build rc $?"
	) &
	LB=$!
fi
sh build/ptx-copy.sh /tmp/px attention_split || { el "PTX failed"; tail /tmp/px/attention_split.log; exit 1; }
cp /tmp/px/attention_split.ptx "$OUT/"
el "ptx made"
same_bodies /tmp/px attention_split
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestFusedAttentionQ8K|TestSplit|TestKernelNamesExist|TestAttentionChoice|TestDec1' 200
tgroup 1 'Conformance' 200
while pgrep -f 'cuda.test' >/dev/null; do sleep 2; done
sleep 1
el "tests done"
while [ ! -s /tmp/q4.gguf ] || pgrep -f "ember synth" >/dev/null; do sleep 2; done
tg() { timeout -s KILL 90 env "$@" bench -m /tmp/q4.gguf -backend cuda -p 0 -n 128 -d $d -r 1 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' '; }
for d in 16384 32768; do
	for r in 1 2; do
		el "d$d round $r: vring $(tg "$E") no_vring $(tg EMBER_CUDA_NO_SPLIT_VRING=1 "$E")"
	done
done
for d in 4096 8192; do
	for r in 1 2; do
		el "d$d round $r: default $(tg "$E") split1 $(tg EMBER_CUDA_NO_DEC1L=1 "$E") split1_no_vring $(tg EMBER_CUDA_NO_DEC1L=1 EMBER_CUDA_NO_SPLIT_VRING=1 "$E")"
	done
done
d=16384
EMBER_CUDA_PROFILE=1 timeout -s KILL 120 "$E" bench -m /tmp/q4.gguf -backend cuda -p 0 -n 32 -d $d -r 1 >"$L/prof16k.txt" 2>&1
grep -E 'attention|cuda profile' "$L/prof16k.txt" | head -12
[ -n "$LB" ] && wait $LB
[ -x $B/bin/llama-bench ] || { el "no llama-bench"; tail -5 "$L/build.txt"; exit 0; }
timeout -s KILL 150 $B/bin/llama-bench -m /tmp/q4.gguf -ngl 99 -fa 1 -p 0 -n 128 -d 4096,8192,16384,32768 -r 3 -o json >"$L/llama.json" 2>"$L/llama.log"
el "llama.cpp: $(python3 -c 'import json,sys,statistics; print([(t["n_depth"], round(statistics.median(t["samples_ts"]),1)) for t in json.load(open(sys.argv[1]))])' "$L/llama.json")"
for d in 4096 8192 16384 32768; do el "ember d$d: $(tg "$E")"; done
el done
