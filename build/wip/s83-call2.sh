# s83-call2.sh: attention_tc's one pass past 2,048 keys (session 83). Prepare as
# s83-call1.sh (TESTS=cuda). Builds llama-bench in the background unless a warm machine
# has it; makes attention_tc.ptx (and a variant with every tile in one pass,
# -DTC_ONE_TILES=0) with this machine's nvcc, runs the prefill, latent and conformance
# tests on them, then the 8B Q4_K_M pp512 at depth: committed against new (and the
# variant at 0 and 1,024), then llama-bench's pp512 at the same depths, same file.
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
sh build/ptx-copy.sh /tmp/px attention_tc attention_mla2 || { el "PTX failed"; exit 1; }
cp /tmp/px/attention_tc.ptx "$OUT/"
rm -rf /tmp/p0 && cp -r /tmp/px /tmp/p0 && sh build/ptx-one.sh /tmp/p0 attention_tc -DTC_ONE_TILES=0 || el "variant failed"
el "ptx made"
same_bodies /tmp/px attention_tc
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestPrefillOnePass|TestAttentionMLA2|TestKernelNamesExist|TestPrefill|TestAttention' 200
tgroup 1 'Conformance' 200
while pgrep -f cuda.test >/dev/null; do sleep 2; done
sleep 1
grep -E 'largest|FAIL|ok ' /tmp/g0.log | head -20
unset EMBER_CUDA_PTX_DIR
el "tests done"
while [ ! -s /tmp/q4.gguf ] || pgrep -f "ember synth" >/dev/null; do sleep 2; done
el "model ready"
pp() { timeout -s KILL 90 env "$@" bench -m /tmp/q4.gguf -backend cuda -p 512 -n 0 -d $d -r 2 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' '; }
for d in 16384 4096; do
	for r in 1 2; do
		el "d$d round $r: committed $(pp "$E") new $(pp EMBER_CUDA_PTX_DIR=/tmp/px "$E")"
	done
done
for d in 0 1024; do
	el "d$d: committed $(pp "$E") new $(pp EMBER_CUDA_PTX_DIR=/tmp/px "$E") all_one $(pp EMBER_CUDA_PTX_DIR=/tmp/p0 "$E")"
done
[ -n "$LB" ] && wait $LB
[ -x $B/bin/llama-bench ] || { el "no llama-bench"; tail -5 "$L/build.txt"; exit 0; }
for r in 1 2; do
	timeout -s KILL 120 $B/bin/llama-bench -m /tmp/q4.gguf -ngl 99 -fa 1 -p 512 -n 0 -d 4096,16384 -r 3 -o json >"$L/llama.$r.json" 2>"$L/llama.$r.log"
	el "llama.cpp round $r: $(python3 -c 'import json,sys,statistics; print([(t["n_depth"], round(statistics.median(t["samples_ts"]),1)) for t in json.load(open(sys.argv[1]))])' "$L/llama.$r.json")"
	for d in 4096 16384; do el "ember new d$d: $(pp EMBER_CUDA_PTX_DIR=/tmp/px "$E")"; done
done
el done
