#!/bin/sh
# llamacpp-gpu.sh: llama.cpp against Ember on one GPU, on the same files, in one run.
# Builds llama-bench with CUDA from bin/llamacpp-src.tar.xz (build/llamacpp-src.sh: the
# llama.cpp of node-llama-cpp@3.21.1, the CPU anchors' release) with the machine's nvcc,
# CMake and ninja, for this GPU's architecture only; writes the synthetic models of
# $MODELS (gpu-setup.sh's names; default q4 v2 q8: Llama-3.1-8B Q4_K_M, DeepSeek-V2-Lite
# Q4_K_M, Llama-3.1-8B Q8_0); then, ROUNDS times (default 2), llama-bench -ngl 99 -fa 1
# -p 512 -n 128 -r 3 and `ember bench -backend cuda -p 512 -n 128 -r 3` on each, in turn,
# and prints a table of the medians and the ratio Ember / llama.cpp. DEPTHS (default 0)
# runs both after a context of each of these many tokens too (llama-bench -d, ember bench
# -d: "tg128 @ d4096"). A pair that would start DEADLINE s (default 540) after the start is
# left out.
#
# Prepare where Go is: build/llamacpp-src.sh; TESTS=cuda build/dev-build.sh; carry
# bin/dev and bin/llamacpp-src.tar.xz. A second call on the same warm machine reuses the
# build (/tmp/lbuild) and the models.
set -u
. build/gpu-setup.sh "${OUT:-/tmp/lcg}"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader
B=/tmp/lbuild
if [ ! -x $B/bin/llama-bench ]; then
	rm -rf /tmp/lsrc && tar xJf bin/llamacpp-src.tar.xz -C /tmp
	cat /tmp/lsrc/COMMIT
	arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.')
	nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
	cmake -S /tmp/lsrc -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON \
		-DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="$arch" -DGGML_NATIVE=ON \
		-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
		-DLLAMA_BUILD_APP=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF >"$L/cmake.txt" 2>&1 ||
		{ el "cmake failed"; tail -20 "$L/cmake.txt"; exit 1; }
	timeout -s KILL "${BUILD_S:-500}" cmake --build $B --target llama-bench -j "$(nproc)" >"$L/build.txt" 2>&1 ||
		{ el "build failed or ran out of time"; tail -20 "$L/build.txt"; exit 1; }
fi
el "llama-bench built"
wait # the models
for r in $(seq 1 "${ROUNDS:-2}"); do
	for m in $MODELS; do
		for dp in ${DEPTHS:-0}; do
			f=/tmp/$m.gguf k=$m.d$dp
			[ $(($(date +%s) - T0)) -lt "${DEADLINE:-540}" ] || { el "past DEADLINE, $k round $r left out"; continue; }
			timeout -s KILL 150 $B/bin/llama-bench -m $f -ngl 99 -fa 1 -p 512 -n 128 -d "$dp" -r 3 -o json >"$L/$k.llama.$r.json" 2>"$L/$k.llama.$r.log" ||
				{ el "llama-bench $k failed"; tail -5 "$L/$k.llama.$r.log"; }
			timeout -s KILL 150 "$E" bench -m $f -backend cuda -p 512 -n 128 -d "$dp" -r 3 -json >"$L/$k.ember.$r.json" 2>"$L/$k.ember.$r.log" ||
				{ el "ember $k failed"; tail -5 "$L/$k.ember.$r.log"; }
			el "round $r $k done"
		done
	done
done
python3 - "$L" $(for m in $MODELS; do for dp in ${DEPTHS:-0}; do echo $m.d$dp; done; done) <<'PY'
import json, statistics, sys, glob
d, models = sys.argv[1], sys.argv[2:]
print("| model.depth | Ember pp512 | llama.cpp pp512 | ratio | Ember tg128 | llama.cpp tg128 | ratio |")
print("|---|---|---|---|---|---|---|")
for m in models:
    e = {"pp": [], "tg": []}; l = {"pp": [], "tg": []}
    for f in sorted(glob.glob(f"{d}/{m}.ember.*.json")):
        try:
            j = json.load(open(f)); e["pp"] += j["pp_runs"]; e["tg"] += j["tg_runs"]
        except Exception as x: print(f, x)
    for f in sorted(glob.glob(f"{d}/{m}.llama.*.json")):
        try:
            for t in json.load(open(f)):
                k = "pp" if t["n_prompt"] > 0 else "tg"
                l[k] += t["samples_ts"]
        except Exception as x: print(f, x)
    med = lambda xs: statistics.median(xs) if xs else float("nan")
    row = [m]
    for k in ("pp", "tg"):
        a, b = med(e[k]), med(l[k])
        row += [f"{a:.1f} ({len(e[k])})", f"{b:.1f} ({len(l[k])})", f"{a / b:.2f}x" if b == b and b else "-"]
    print("| " + " | ".join(row) + " |")
PY
[ -n "${STREAMS:-}" ] || { el done; exit 0; }
cmake --build $B --target llama-batched-bench -j "$(nproc)" >"$L/bb-build.txt" 2>&1 || { el "llama-batched-bench build failed"; tail -5 "$L/bb-build.txt"; exit 1; }
ctx=$((STREAMS * 640 + 1024))
for m in $MODELS; do
	for r in 1 2; do
		printf '%s llama.cpp %s streams: ' "$m" "$STREAMS"
		timeout -s KILL 150 $B/bin/llama-batched-bench -m /tmp/$m.gguf -ngl 99 -fa 1 -c $ctx -b 2048 -ub 512 \
			-npp 512 -ntg 128 -npl "$STREAMS" 2>"$L/$m.bb.$r.log" | grep -E '^\| +512 ' | cut -d'|' -f9 | tr -d ' '
		printf '%s Ember %s streams: ' "$m" "$STREAMS"
		timeout -s KILL 150 "$E" bench -m /tmp/$m.gguf -backend cuda -streams "$STREAMS" -p 512 -n 128 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f6 | tr -d ' '
	done
done
el done
