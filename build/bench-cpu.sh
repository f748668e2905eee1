#!/usr/bin/env bash
# build/bench-cpu.sh: Ember against llama.cpp on the CPU, on the same files, in the same run.
#
#   LLAMACPP_BENCH=path/to/llamacpp_bench.mjs NLC_DIR=/tmp/nlc build/bench-cpu.sh [DIR]
#
# llama.cpp comes from npm's node-llama-cpp prebuilt (install it once with
# `mkdir -p /tmp/nlc && cd /tmp/nlc && npm init -y && npm i -E node-llama-cpp@3.21.1`);
# llamacpp_bench.mjs is the project's shared timing script for it. The models are
# synthetic (random weights, real shapes) written by `ember synth` into DIR (default
# /tmp/ember-bench). THREADS (2), REPS (3), PP (512), TG (128) and MODELS (preset:ftype
# pairs; add deepseek-v2-lite:q4_k_m for issue 9's MoE model) can be set. Prints a
# Markdown table of medians and the Ember / llama.cpp ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-/tmp/ember-bench}
threads=${THREADS:-2} reps=${REPS:-3} pp=${PP:-512} tg=${TG:-128}
: "${LLAMACPP_BENCH:?set LLAMACPP_BENCH to llamacpp_bench.mjs}" "${NLC_DIR:?set NLC_DIR to the node-llama-cpp install}"
mkdir -p "$dir"
export PATH=/usr/local/go/bin:$PATH
CGO_ENABLED=1 go build -tags nogui -o "$dir/ember" .
rows=()
models=${MODELS:-"llama3.2-1b:q4_k_m llama3.2-1b:q8_0 qwen2-1.5b:q4_k_m"}
for spec in $models; do
	spec=${spec/:/ }
	read -r preset ftype <<<"$spec"
	f="$dir/$preset-$ftype.gguf"
	[ -f "$f" ] || "$dir/ember" synth "$f" -preset "$preset" -ftype "$ftype"
	"$dir/ember" bench -m "$f" -p "$pp" -n "$tg" -r "$reps" -t "$threads" -json >"$f.ember.json"
	node "$LLAMACPP_BENCH" --nlc-dir "$NLC_DIR" --model "$f" --threads "$threads" --pp "$pp" --tg "$tg" \
		--reps "$reps" --json "$f.llamacpp.json" >"$f.llamacpp.log" 2>&1
	rows+=("$preset $ftype $f")
done
node - "${rows[@]}" <<'JS'
const fs = require("fs");
const med = s => s.median ?? s.med ?? s;
console.log("| model | file | Ember pp | llama.cpp pp | ratio | Ember tg | llama.cpp tg | ratio | Ember decode GB/s |");
console.log("|---|---|---|---|---|---|---|---|---|");
for (const r of process.argv.slice(2)) {
	const [preset, ftype, f] = r.split(" ");
	const e = JSON.parse(fs.readFileSync(f + ".ember.json"));
	const l = JSON.parse(fs.readFileSync(f + ".llamacpp.json"));
	const lpp = med(l.pp_tps), ltg = med(l.tg_from_empty_tps);
	const mib = e.model_bytes / 2 ** 20;
	const gbs = e.tg_gb_s; // weight bytes read per token x tokens per second
	console.log(`| ${preset} | ${ftype}, ${mib.toFixed(0)} MiB | ${e.pp_tok_s.toFixed(1)} | ${lpp.toFixed(1)} | ${(e.pp_tok_s / lpp).toFixed(2)}x | ${e.tg_tok_s.toFixed(1)} | ${ltg.toFixed(1)} | ${(e.tg_tok_s / ltg).toFixed(2)}x | ${gbs.toFixed(1)} |`);
}
JS
