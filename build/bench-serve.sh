#!/usr/bin/env bash
# build/bench-serve.sh: the serving engine on the CPU, on the synthetic Llama-3.2-1B
# Q4_K_M: decode tok/s summed over 1, 4 and 16 concurrent streams (32-token prompts,
# 128 tokens each), time to first token of a request sharing a 1,000-token prefix with
# an earlier one against a cold one, and of the next turn of a 2,000-token conversation
# after a restart, cold against loaded from the persistent prefix cache.
#
#   build/bench-serve.sh [DIR]      (DIR as for build/bench-cpu.sh, default /tmp/ember-bench)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-/tmp/ember-bench}
threads=${THREADS:-2}
mkdir -p "$dir"
export PATH=/usr/local/go/bin:$PATH
CGO_ENABLED=1 go build -tags nogui -o "$dir/ember" .
f="$dir/llama3.2-1b-q4_k_m.gguf"
[ -f "$f" ] || "$dir/ember" synth "$f" -preset llama3.2-1b -ftype q4_k_m
"$dir/ember" bench -m "$f" -t "$threads" -streams 1,4,16 -p 32 -n 128 -prefix 1000 -restore 2000
