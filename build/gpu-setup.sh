# gpu-setup.sh: sourced by the GPU machine's scripts (next-gpu.sh, carve-gpu.sh) from
# the repository root: unpacks bin/dev (build/dev-build.sh, carried) and writes the
# synthetic models named in $MODELS (q4: Llama-3.1-8B Q4_K_M, q8: its Q8_0, q5: its
# Q5_K_M, q3: its Q3_K_M, q2: its Q2_K, q40, q41 and q51: its Q4_0, Q4_1 and Q5_1, f16
# and bf: its F16 and BF16, v2: DeepSeek-V2-Lite Q4_K_M, v5: its Q5_K_M) to /tmp in the
# background (the caller waits). Sets R (the repository root), L ($OUT or $1) and E (the
# ember binary), and the bench readers q (tg128 or the last figure), p
# (the last two rows' tok/s: pp512/tg128) and s (the serving run's tok/s).
R=$PWD L=${OUT:-$1}
mkdir -p "$L"
for f in bin/dev/*.xz; do [ -e "$f" ] && xz -d -f "$f"; done
chmod +x bin/dev/*
E=$R/bin/dev/ember
for m in ${MODELS:-q4 q8 v2}; do
	[ -s /tmp/$m.gguf ] && continue # written by an earlier call on this machine
	case $m in
	q4) $E synth /tmp/q4.gguf -preset llama3.1-8b -ftype q4_k_m >/dev/null 2>&1 & ;;
	q8) $E synth /tmp/q8.gguf -preset llama3.1-8b -ftype q8_0 >/dev/null 2>&1 & ;;
	v2) $E synth /tmp/v2.gguf -preset deepseek-v2-lite -ftype q4_k_m >/dev/null 2>&1 & ;;
	q5) $E synth /tmp/q5.gguf -preset llama3.1-8b -ftype q5_k_m >/dev/null 2>&1 & ;;
	f16) $E synth /tmp/f16.gguf -preset llama3.1-8b -ftype f16 >/dev/null 2>&1 & ;;
	bf) $E synth /tmp/bf.gguf -preset llama3.1-8b -ftype bf16 >/dev/null 2>&1 & ;;
	v5) $E synth /tmp/v5.gguf -preset deepseek-v2-lite -ftype q5_k_m >/dev/null 2>&1 & ;;
	q3) $E synth /tmp/q3.gguf -preset llama3.1-8b -ftype q3_k_m >/dev/null 2>&1 & ;;
	q2) $E synth /tmp/q2.gguf -preset llama3.1-8b -ftype q2_k >/dev/null 2>&1 & ;;
	q40) $E synth /tmp/q40.gguf -preset llama3.1-8b -ftype q4_0 >/dev/null 2>&1 & ;;
	q41) $E synth /tmp/q41.gguf -preset llama3.1-8b -ftype q4_1 >/dev/null 2>&1 & ;;
	q51) $E synth /tmp/q51.gguf -preset llama3.1-8b -ftype q5_1 >/dev/null 2>&1 & ;;
	esac
done
q() { timeout -s KILL 100 "$@" 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' '; }
p() { timeout -s KILL 100 "$@" 2>&1 | grep '^| [^-m]' | tail -2 | cut -d'|' -f8 | sed 's/(.*//' | tr -d ' ' | paste -sd/; }
s() { timeout -s KILL 120 "$@" 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f6; }
# el prints a line after the seconds since gpu-setup.sh was sourced.
T0=$(date +%s)
el() { echo "[$(($(date +%s) - T0)) s] $*"; }
# ptx_all DIR makes every module's PTX in DIR (ptx-copy.sh) and returns it as $L/ptx.tar.xz.
ptx_all() {
	sh build/ptx-copy.sh "$1" || el "PTX FAILED"
	(cd "$1" && tar cJf "$L/ptx.tar.xz" *.ptx)
	el ptx done
}
# cubin_all DIR makes the sm_90 cubins of DIR's PTX (every module's: ptx-copy.sh's
# directory) and returns them as $L/sm90.tar.xz (kernels/cuda/sm90's files: unpack
# there beside the PTX, or TestCubinsMatchPTX fails).
cubin_all() {
	rm -rf /tmp/sm90 && sh build/gen-cubin.sh sm90 /tmp/sm90 "$1" && (cd /tmp/sm90 && tar cJf "$L/sm90.tar.xz" *) || el "CUBIN FAILED"
}
# tgroup N PATTERN LIMIT runs bin/dev/cuda.test -test.run PATTERN in the background
# (-test.v into /tmp/gN.log, killed after LIMIT s), then prints its passes, failures and
# last test started.
tgroup() {
	(
		cd inference/backend/cuda && timeout -s KILL "$3" "$R/bin/dev/cuda.test" -test.v -test.run "$2" >/tmp/g$1.log 2>&1
		echo "group $1 rc $?: $(grep -E -c -- '^--- PASS' /tmp/g$1.log) pass, $(grep -E -c -- '--- FAIL' /tmp/g$1.log) fail; last: $(grep -E -- '^(=== RUN|--- )' /tmp/g$1.log | tail -1)"
		grep -E -A4 -- '--- FAIL' /tmp/g$1.log | head -24
	) &
}
# gsum LABEL N... appends to $L/log.txt, for each tgroup N that has ended, its passes,
# failures, skips and last test, and the lines around a failure or panic.
gsum() {
	_l=$1
	shift
	for _g in "$@"; do
		el "$_l g$_g: $(grep -E -c -- '^--- PASS' /tmp/g$_g.log) pass, $(grep -E -c -- '--- FAIL' /tmp/g$_g.log) fail, $(grep -E -c -- '--- SKIP' /tmp/g$_g.log) skip; $(grep -E -- '^(=== RUN|--- )' /tmp/g$_g.log | tail -1)" | tee -a "$L/log.txt"
		grep -E -B3 -A8 -- '--- FAIL|panic' /tmp/g$_g.log | head -20 >>"$L/log.txt"
	done
}
# ds2_tests LIMIT runs deepseek2's CUDA tests in the background (the caller waits),
# killed after LIMIT s, on $EMBER_CUDA_PTX_DIR's PTX when set; it prints their last
# three lines.
ds2_tests() {
	(cd inference/model/deepseek2 && timeout -s KILL "$1" "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3 | sed 's/^/deepseek2: /') &
}
# model_tests LIMIT runs, in the background (the caller waits), the CUDA goldens of every
# architecture and deepseek2's CUDA tests (ds2_tests), each killed after LIMIT s, on
# $EMBER_CUDA_PTX_DIR's PTX when set; each prints its last three lines.
model_tests() {
	(cd inference/model/archs && timeout -s KILL "$1" "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA' 2>&1 | tail -3 | sed 's/^/goldens: /') &
	ds2_tests "$1"
}
# all_tests PATTERN runs cuda.test's PATTERN (group 0) and conformance tests (group 1)
# beside model_tests, each killed after 300 s, on $EMBER_CUDA_PTX_DIR's PTX when set,
# and waits for them.
all_tests() {
	tgroup 0 "$1" 300
	tgroup 1 'Conformance' 300
	model_tests 300
	wait
	el "tests done"
}
# ptx_tests PATTERN makes every module's PTX in /tmp/px (ptx_all) and runs all_tests
# PATTERN on it; N is then the dev binary on that PTX.
ptx_tests() {
	ptx_all /tmp/px
	export EMBER_CUDA_PTX_DIR=/tmp/px
	all_tests "$1"
	unset EMBER_CUDA_PTX_DIR
	N="EMBER_CUDA_PTX_DIR=/tmp/px $E"
}
# base_bin unpacks bin/base/ember (main's binary, carried beside bin/dev) and sets B to it.
base_bin() {
	xz -d -f bin/base/ember.xz && chmod +x bin/base/ember
	B=$R/bin/base/ember
}
# sample_tests LIMIT runs cuda.test's sampling and feeder tests (group 0, the nucleus,
# draws and queued cases' lines shown) beside the engine's CUDA tests, each killed after
# LIMIT s, on $EMBER_CUDA_PTX_DIR's PTX when set.
sample_tests() {
	tgroup 0 'TestSampleAhead|TestFeeder|TestArgMax|TestTopK|TestKernelNamesExist|TestEmbeddedKernelsWait' "$1"
	(cd inference/engine && timeout -s KILL "$1" "$R/bin/dev/engine.test" -test.v -test.run 'CUDA' 2>&1 | grep -E -- '^(--- |ok|FAIL|PASS)|_test.go:[0-9]+: [^0-9]' | tail -8) &
	wait
	grep -E -- '--- (PASS|FAIL).*(nucleus|draws|queued)' /tmp/g0.log
	el "tests done"
}
# same_bodies DIR MODULE... says which committed PTX bodies (all but their first line,
# the sources' hash) differ from DIR's, leaving out the MODULEs named (the ones changed).
same_bodies() {
	d=$1
	shift
	for f in kernels/cuda/*.ptx; do
		m=$(basename "$f" .ptx)
		case " $* " in *" $m "*) continue ;; esac
		tail -n +2 "$f" >/tmp/body.a
		tail -n +2 "$d/$m.ptx" >/tmp/body.b 2>/dev/null
		cmp -s /tmp/body.a /tmp/body.b || el "body differs: $m.ptx"
	done
}
# tl LOG MODEL [VAR=value ...] runs tg64 of /tmp/MODEL.gguf with the timeline of its
# 40th batch (EMBER_CUDA_TIMELINE) on /tmp/tl's PTX (build/timeline-ptx.sh; a VAR may
# set EMBER_CUDA_PTX_DIR to another), the VARs set, into $L/LOG, and prints the report's
# first lines and the head of its summary by kernel.
tl() {
	_log=$1 _m=$2
	shift 2
	env EMBER_CUDA_PTX_DIR=/tmp/tl EMBER_CUDA_TIMELINE=40 "$@" timeout -s KILL 120 "$E" bench -backend cuda -p 0 -n 64 -r 1 \
		-m "/tmp/$_m.gguf" >"$L/$_log" 2>&1
	el "$_log: $(grep 'cuda timeline' "$L/$_log" | tr '\n' ' ')"
	grep -A8 '^kernel  *count' "$L/$_log"
}
# tg1 MODEL SIDE prints one tg128 run's tok/s of /tmp/MODEL.gguf (SIDE: an env prefix
# ending in the binary), for ab and sweep.
tg1() { q env $2 bench -backend cuda -p 0 -n 128 -r 1 -m "/tmp/$1.gguf" | sed 's/(.*//'; }
# tg3 NAME MODEL runs the embedded binary's tg128 -r 3 of /tmp/MODEL.gguf (the targets'
# measure), keeps the whole table in $L/NAME.txt and prints its last row's tok/s.
tg3() {
	timeout -s KILL 150 "$E" bench -m "/tmp/$2.gguf" -backend cuda -p 0 -n 128 -r 3 >"$L/$1.txt" 2>&1
	grep '^| ' "$L/$1.txt" | tail -1 | cut -d'|' -f8 | tr -d ' '
}
# ab N MODEL A B runs tg128 of /tmp/MODEL.gguf N rounds, A then B each round (A and B are
# env prefixes ending in the binary, as "$N" or "EMBER_CUDA_X=1 $E"), prints each pair,
# then both medians, B/A and the rounds B won with the sign test's two-sided p (one
# binary's runs spread ~±3% between calls on the H200, so a 1% change needs many
# rounds; session 46).
ab() {
	_n=$1 _m=$2 _a=$3 _b=$4 _ra="" _rb=""
	for _r in $(seq "$_n"); do
		_x=$(tg1 "$_m" "$_a")
		_y=$(tg1 "$_m" "$_b")
		el "$_m tg128 A / B: $_x / $_y"
		_ra="$_ra $_x" _rb="$_rb $_y"
	done
	el "$(python3 build/ab-sum.py "$_ra" "$_rb")"
}
# sweep N MODEL S1 S2 ... runs tg128 of /tmp/MODEL.gguf N rounds over the sides S1 ..
# (env prefixes ending in the binary, as ab's A and B), each round every side once in an
# order rotated by the round (so that no side always runs first: session 55 found the
# first of a pair winning), prints each round, then for each other side ab-sum.py's line
# against S1 (both medians, B/A, rounds won, sign test). s56-call2.sh .. s56-call4.sh
# did this by hand.
sweep() {
	_n=$1 _m=$2
	shift 2
	_k=$#
	for _i in $(seq "$_k"); do eval "_r$_i=''"; done
	for _r in $(seq "$_n"); do
		_line="round $_r:"
		for _j in $(seq 0 $((_k - 1))); do
			_i=$(((_j + _r) % _k + 1))
			eval "_s=\${$_i}"
			_x=$(tg1 "$_m" "$_s")
			eval "_r$_i=\"\$_r$_i \$_x\""
			_line="$_line s$_i ${_x:-?}"
		done
		el "$_m $_line"
	done
	for _i in $(seq 2 "$_k"); do
		eval "_s=\${$_i} _v=\$_r$_i"
		el "s$_i ($_s): $(python3 build/ab-sum.py "$_r1" "$_v")"
	done
}
# ph_sum LOG averages the PH lines a kernel built with build/wip/short-phases.patch
# printed into LOG, by position and block: each stamp's ns after the kernel's wait.
ph_sum() {
	awk '/^PH/ { k = $3 " " $5; c[k]++; for (f = 8; f <= NF; f++) if ($f ~ /^-?[0-9]+$/) s[k, f] += $f; nf = NF; lab[k] = $0 }
END { for (k in c) { line = "n " k " (" c[k] " launches):"; split(lab[k], L, " ");
	for (f = 8; f <= nf; f++) if (L[f] ~ /^-?[0-9]+$/) line = line " " L[f - 1] " " int(s[k, f] / c[k]); print line } }' "$1" | sort
}
# variant DIR SOURCE: DIR with kernels/cuda's sources and PTX, SOURCE (a variant of
# attention_short.cu) as its attention_short.cu, compiled there (the session 65 calls'
# variant kernels; any module with MODULE as a third argument). The other modules' PTX
# are the committed files, or, where a call holds them out of the working tree (its
# 64 MiB limit), ptx_all's in $PX (default /tmp/px; run ptx_all first).
variant() {
	_px=kernels/cuda
	ls kernels/cuda/*.ptx >/dev/null 2>&1 || _px=${PX:-/tmp/px}
	mkdir -p "$1" && cp kernels/cuda/*.cu kernels/cuda/*.cuh "$_px"/*.ptx "$1/" && cp "$2" "$1/${3:-attention_short}.cu" &&
		sh build/ptx-one.sh "$1" "${3:-attention_short}" 2>/dev/null || el "PTX FAILED: $1"
}
# phases LOG PTXDIR [VAR=VALUE ...]: one tg128 run of V2-Lite on PTXDIR's kernels built
# with phase stamps (build/wip/short-phases.patch and its successors) into $L/LOG, its
# tok/s and ph_sum's summary.
phases() {
	_log=$1 _dir=$2
	shift 2
	env "$@" EMBER_CUDA_PTX_DIR="$_dir" timeout -s KILL 120 "$E" bench -backend cuda -p 0 -n 128 -r 1 -m /tmp/v2.gguf >"$L/$_log" 2>&1
	el "phases $_log $*: $(grep '^| ' "$L/$_log" | tail -1 | cut -d'|' -f8)"
	ph_sum "$L/$_log"
}
# final MODEL ...: the README's figures, bench -p 512 -n 128 -r 3 of each model on the
# embedded PTX, logged to $L/bench_MODEL.log.
final() {
	for _m in "$@"; do
		timeout -s KILL 150 "$E" bench -backend cuda -m /tmp/$_m.gguf -p 512 -n 128 -r 3 >"$L/bench_$_m.log" 2>&1
		el "$_m: $(grep '^| ' "$L/bench_$_m.log" | tail -2 | tr '\n' ' ')"
	done
}

# patched NAME PATCH makes /tmp/vNAME: /tmp/px (ptx_all's sources and PTX) with PATCH (a
# path from the repository root, against kernels/cuda/attention_short.cu) applied and
# attention_short compiled there; its PTX comes back as $L/attention_short-NAME.ptx.
patched() {
	_d=/tmp/v$1
	rm -rf "$_d" && cp -r /tmp/px "$_d" && (cd "$_d" && patch -s -p3 <"$R/$2") && sh build/ptx-one.sh "$_d" attention_short ||
		el "PTX FAILED $1"
	cp "$_d/attention_short.ptx" "$L/attention_short-$1.ptx"
}
# bits_tests N DIR [LIMIT] runs the attention kernels' bits tests (the latent, short
# and fused-Q8K ones; $BITS_TESTS, a test pattern, for others) as tgroup N on DIR's PTX,
# killed after LIMIT s (200), in the background (the caller waits); EMBER_CUDA_PTX_DIR
# is unset after.
bits_tests() {
	export EMBER_CUDA_PTX_DIR="$2"
	tgroup "$1" "${BITS_TESTS:-TestAttentionLatentBits|TestFusedAttentionQ8K|TestShortAttention|TestLatentAttention}" "${3:-200}"
	unset EMBER_CUDA_PTX_DIR
}
# llama_bg builds llama.cpp's llama-bench (CUDA, this GPU's arch) from the carried
# bin/llamacpp-src.tar.xz into /tmp/lbuild in the background, niced, unless built by an
# earlier call on this machine; LB is its pid ("" when there was nothing to build); it
# logs to $L/cmake.txt and $L/build.txt. Wait for it (wait $LB) before llama_tg.
llama_bg() {
	LB=""
	[ -x /tmp/lbuild/bin/llama-bench ] && return 0
	(
		rm -rf /tmp/lsrc && tar xJf bin/llamacpp-src.tar.xz -C /tmp
		arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.')
		nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
		cmake -S /tmp/lsrc -B /tmp/lbuild -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON \
			-DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="$arch" -DGGML_NATIVE=ON \
			-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
			-DLLAMA_BUILD_APP=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF >"$L/cmake.txt" 2>&1 &&
			nice -n 19 timeout -s KILL 400 cmake --build /tmp/lbuild --target llama-bench -j 12 >"$L/build.txt" 2>&1
		el "llama-bench build rc $?"
	) &
	LB=$!
}
# llama_tg MODEL DEPTHS prints llama-bench's tg128 medians (-fa 1, three repetitions) of
# /tmp/MODEL.gguf at the comma-separated depths, as (depth, tok/s) pairs.
llama_tg() {
	[ -x /tmp/lbuild/bin/llama-bench ] || { el "no llama-bench"; tail -5 "$L/build.txt"; return 1; }
	timeout -s KILL 150 /tmp/lbuild/bin/llama-bench -m "/tmp/$1.gguf" -ngl 99 -fa 1 -p 0 -n 128 -d "$2" -r 3 -o json >"$L/llama.json" 2>"$L/llama.log"
	el "llama.cpp: $(python3 -c 'import json,sys,statistics; print([(t["n_depth"], round(statistics.median(t["samples_ts"]),1)) for t in json.load(open(sys.argv[1]))])' "$L/llama.json")"
}
