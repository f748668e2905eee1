#!/bin/sh
# ptx-variants.sh: kernel modules as they are in the tree, or with other nvcc flags,
# against the embedded PTX, on the GPU machine from the repository root with bin/dev
# carried (build/dev-build.sh). Each variant is the modules compiled into a copy of
# kernels/cuda (loaded through EMBER_CUDA_PTX_DIR); then the benchmarks on the embedded
# PTX and on each copy in turn, ROUNDS rounds (default 2); then, with TESTS, the backend's
# tests matching that regex (and, with GOLDENS=1, the CUDA goldens and deepseek2's CUDA
# tests) on the first variant. $OUT gets each variant's PTX (NAME-MODULE.ptx), to commit
# the one that wins.
#
#   MODULES   the .cu files without .cu (default attention_dec), compiled by ptx-one.sh
#   VARIANTS  name:flag,flag ... (default "tree:": the sources as they are, no flags), e.g.
#             "r128:-maxrregcount=128 r96:-maxrregcount=96" or "k:-DMV1_PF=4096"
#   BENCH     any of q4 (8B Q4_K_M tg128), q8 (8B Q8_0 tg128), s64 (8B Q4_K_M at 64
#             streams), v2 (V2-Lite tg128), v64 (V2-Lite at 64 streams); default "q4 s64"
#
#   MODULES=attention_dec BENCH="s64 q4" TESTS='Attention|Conformance' GOLDENS=1 sh build/ptx-variants.sh
set -u
B=${BENCH:-q4 s64}
M=""
for b in $B; do
	case $b in q4 | s64) M="$M q4" ;; q8) M="$M q8" ;; v2 | v64) M="$M v2" ;; esac
done
export MODELS="$(echo "$M" | tr ' ' '\n' | sort -u | tr '\n' ' ')"
. build/gpu-setup.sh "${OUT:-/tmp/ptx-variants}"
V=${VARIANTS:-tree:}
for v in $V; do
	n=${v%%:*} f=$(echo "${v#*:}" | tr , ' ')
	d=/tmp/pv-$n
	rm -rf "$d" && mkdir -p "$d" && cp kernels/cuda/*.cu kernels/cuda/*.cuh kernels/cuda/*.ptx "$d/"
	for m in ${MODULES:-attention_dec}; do
		(sh build/ptx-one.sh "$d" "$m" $f 2>"$d/$m.log" && cp "$d/$m.ptx" "$L/$n-$m.ptx" ||
			{ echo "$n: $m.cu does not compile"; tail -5 "$d/$m.log"; }) &
	done
done
wait
run() { # the benchmarks of BENCH, on one line
	for b in $B; do
		case $b in
		q4) printf ' q4 tg128 %s' "$(q "$E" bench -m /tmp/q4.gguf -backend cuda -p 0 -n 128)" ;;
		q8) printf ' q8 tg128 %s' "$(q "$E" bench -m /tmp/q8.gguf -backend cuda -p 0 -n 128)" ;;
		s64) printf ' q4 64 streams %s' "$(s "$E" bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128)" ;;
		v2) printf ' v2 tg128 %s' "$(q "$E" bench -m /tmp/v2.gguf -backend cuda -p 0 -n 128)" ;;
		v64) printf ' v2 64 streams %s' "$(s "$E" bench -m /tmp/v2.gguf -backend cuda -streams 64 -p 512 -n 128)" ;;
		esac
	done
	echo
}
for r in $(seq "${ROUNDS:-2}"); do
	unset EMBER_CUDA_PTX_DIR
	echo "round $r embedded:$(run)"
	for v in $V; do
		n=${v%%:*}
		export EMBER_CUDA_PTX_DIR=/tmp/pv-$n
		echo "round $r $n:$(run)"
	done
done
[ -n "${TESTS:-}${GOLDENS:-}" ] || exit 0
v=${V%% *}
export EMBER_CUDA_PTX_DIR=/tmp/pv-${v%%:*}
echo "tests on ${v%%:*}:"
[ -n "${TESTS:-}" ] && (cd inference/backend/cuda && timeout -s KILL 300 "$R/bin/dev/cuda.test" -test.run "$TESTS" 2>&1 | tail -15) &
if [ -n "${GOLDENS:-}" ]; then
	(cd inference/model/archs && timeout -s KILL 300 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA' 2>&1 | tail -5) &
	(cd inference/model/deepseek2 && timeout -s KILL 300 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -5) &
fi
wait
