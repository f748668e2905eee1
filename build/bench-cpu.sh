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
# pairs; add deepseek-v2-lite:q4_k_m for issue 9's MoE model) can be set. The two run
# alternately, one repetition each in turn (Ember, llama.cpp, Ember, ...), so that a
# machine whose memory bandwidth drifts over minutes (a VM's does, by +-20%) weighs on
# both alike. Prints a Markdown table of medians, and the median of the per-repetition
# Ember / llama.cpp ratios.
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
	for r in $(seq 1 "$reps"); do
		"$dir/ember" bench -m "$f" -p "$pp" -n "$tg" -r 1 -t "$threads" -json >"$f.ember.$r.json"
		node "$LLAMACPP_BENCH" --nlc-dir "$NLC_DIR" --model "$f" --threads "$threads" --pp "$pp" --tg "$tg" \
			--reps 1 --json "$f.llamacpp.$r.json" >"$f.llamacpp.$r.log" 2>&1
	done
	rows+=("$preset $ftype $f $reps")
done
node - "${rows[@]}" <<'JS'
const fs = require("fs");
const median = xs => {
	const s = [...xs].sort((a, b) => a - b), m = s.length >> 1;
	return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const med = s => s.median ?? s.med ?? s;
console.log("| model | file | Ember pp | llama.cpp pp | ratio | Ember tg | llama.cpp tg | ratio | tg ratios, in turn | Ember decode GB/s |");
console.log("|---|---|---|---|---|---|---|---|---|---|");
for (const r of process.argv.slice(2)) {
	const [preset, ftype, f, reps] = r.split(" ");
	const e = [], l = [];
	for (let i = 1; i <= +reps; i++) {
		e.push(JSON.parse(fs.readFileSync(`${f}.ember.${i}.json`)));
		l.push(JSON.parse(fs.readFileSync(`${f}.llamacpp.${i}.json`)));
	}
	const epp = e.map(x => x.pp_tok_s), etg = e.map(x => x.tg_tok_s);
	const lpp = l.map(x => med(x.pp_tps)), ltg = l.map(x => med(x.tg_from_empty_tps));
	const ppr = epp.map((v, i) => v / lpp[i]), tgr = etg.map((v, i) => v / ltg[i]);
	const mib = e[0].model_bytes / 2 ** 20;
	const gbs = e[0].read_bytes_per_token * median(etg) / 1e9; // weight bytes read per token x tokens per second
	console.log(`| ${preset} | ${ftype}, ${mib.toFixed(0)} MiB | ${median(epp).toFixed(1)} | ${median(lpp).toFixed(1)} | ${median(ppr).toFixed(2)}x | ${median(etg).toFixed(1)} | ${median(ltg).toFixed(1)} | ${median(tgr).toFixed(2)}x | ${tgr.map(v => v.toFixed(2)).join(" ")} | ${gbs.toFixed(1)} |`);
}
JS
