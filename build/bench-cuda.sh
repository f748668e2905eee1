#!/bin/sh
# bench-cuda.sh: measure `ember bench -backend cuda` on synthetic Llama-3.1-8B shapes
# (../shared/ANCHORS.md), Q4_K_M and Q8_0, pp512 and tg128, median of 3.
#
#   build/bench-cuda.sh [ember-binary] [model-dir]
#
# Q4_K_M files also run the serving figures (STREAMS, default 1,64 streams).
# PRESETS (default llama3.1-8b) and FTYPES (default q4_k_m q8_0) pick other models, e.g.
# PRESETS=deepseek-v2-lite FTYPES=q4_k_m (9.9 GiB).
#
# Needs a GPU with the CUDA driver; the binary is built elsewhere if this machine has no
# Go (CGO_ENABLED=1 go build -tags nogui -o bin/ember .). Models are written once by
# `ember synth` into model-dir (default /tmp/ember-bench, about 13 GB).
set -eu
EMBER=${1:-bin/ember}
DIR=${2:-/tmp/ember-bench}
mkdir -p "$DIR"
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem --format=csv,noheader || true
for preset in ${PRESETS:-llama3.1-8b}; do
	for ft in ${FTYPES:-q4_k_m q8_0}; do
		m="$DIR/$preset-$ft.gguf"
		[ -f "$m" ] || "$EMBER" synth "$m" -preset "$preset" -ftype "$ft"
		"$EMBER" bench -m "$m" -backend cuda -p 512 -n 128 -r 3
		# Serving: 512-token prompts, 128 tokens generated each, decode tok/s summed.
		[ "$ft" = q8_0 ] || "$EMBER" bench -m "$m" -backend cuda -streams "${STREAMS:-1,64}" -p 512 -n 128
	done
done
