# s83-call1.sh: attention_mla2 in one pass (online softmax; session 83). Prepare:
# TESTS=cuda sh build/dev-build.sh; build/llamacpp-src.sh's bin/llamacpp-src.tar.xz; hold
# testdata's golden, vocab and tokenizers out; carry bin/dev and the tarball. Builds
# llama-bench in the background (as build/llamacpp-gpu.sh does), makes attention_mla2.ptx
# with this machine's nvcc (returned in $OUT), runs its test against attention_mla, then
# V2-Lite pp512 at depth: the committed (two-pass) kernel, the new one, and
# attention_mla without either; at depth 0 the new one also where attention_mla keeps its
# scores (EMBER_CUDA_MLA2_ALL); last llama-bench's pp512 at the same depths, same file.
set -u
MODELS="v2" . build/gpu-setup.sh "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
B=/tmp/lbuild
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
sh build/ptx-copy.sh /tmp/px attention_mla2 || { el "PTX failed"; tail /tmp/px/attention_mla2.log; exit 1; }
cp /tmp/px/attention_mla2.ptx "$OUT/"
el "ptx made"
(cd inference/backend/cuda && EMBER_CUDA_PTX_DIR=/tmp/px timeout -s KILL 90 "$R/bin/dev/cuda.test" -test.run 'TestAttentionMLA2|TestKernelNamesExist|TestAttentionChoice' -test.v 2>&1 |
	tee "$L/tests.log" | grep -E '^(--- |ok|FAIL|PASS|panic)|attention_mla|largest' | head -30)
el "tests done"
while [ ! -s /tmp/v2.gguf ] || pgrep -f "ember synth" >/dev/null; do sleep 2; done
el "model ready"
pp() { timeout -s KILL 90 env "$@" bench -m /tmp/v2.gguf -backend cuda -p 512 -n 0 -d $d -r 2 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' '; }
for d in 16384 4096; do
	for r in 1 2; do
		el "d$d round $r: committed $(pp "$E") new $(pp EMBER_CUDA_PTX_DIR=/tmp/px "$E") no_mla2 $(pp EMBER_CUDA_NO_MLA2=1 "$E")"
	done
done
for d in 0 1024; do
	for r in 1 2; do
		el "d$d round $r: committed $(pp "$E") new $(pp EMBER_CUDA_PTX_DIR=/tmp/px "$E") new_all $(pp EMBER_CUDA_PTX_DIR=/tmp/px EMBER_CUDA_MLA2_ALL=1 "$E")"
	done
done
wait $LB
[ -x $B/bin/llama-bench ] || { el "no llama-bench"; tail -5 "$L/build.txt"; exit 0; }
for r in 1 2; do
	timeout -s KILL 120 $B/bin/llama-bench -m /tmp/v2.gguf -ngl 99 -fa 1 -p 512 -n 0 -d 4096,16384 -r 3 -o json >"$L/llama.$r.json" 2>"$L/llama.$r.log"
	el "llama.cpp round $r: $(python3 -c 'import json,sys,statistics; print([(t["n_depth"], round(statistics.median(t["samples_ts"]),1)) for t in json.load(open(sys.argv[1]))])' "$L/llama.$r.json")"
	for d in 4096 16384; do el "ember new d$d: $(pp EMBER_CUDA_PTX_DIR=/tmp/px "$E")"; done
done
el done
