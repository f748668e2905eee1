# s82-call3.sh: attention_decD_1l in several clusters a KV head (session 82). Prepare
# here: TESTS=cuda sh build/dev-build.sh; hold testdata/golden, vocab and tokenizers out
# (the PTX travels: ptx-copy.sh takes the committed modules but attention_long); carry
# bin/dev. Makes attention_long.ptx with this machine's nvcc (returned in $OUT), runs the
# cluster tests on it, then the 8B Q4_K_M's tg64 at depth with one cluster a KV head
# (EMBER_CUDA_DEC1L_CLUSTERS=1: the committed choice, the split kernels past 16,384)
# against the new choice, alternating.
set -u
MODELS="q4" . build/gpu-setup.sh "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
sh build/ptx-copy.sh /tmp/px attention_long || { el "PTX failed"; cat /tmp/px/attention_long.log | tail; exit 1; }
cp /tmp/px/attention_long.ptx "$OUT/"
export EMBER_CUDA_PTX_DIR=/tmp/px
el "ptx made"
(cd inference/backend/cuda && timeout -s KILL "${TLIM:-240}" "$R/bin/dev/cuda.test" -test.run 'TestDec1Cluster|TestDec1LClusters|TestKernelNamesExist' -test.v 2>&1 |
	tee "$L/tests.log" | grep -E '^(--- |ok|FAIL|PASS|panic)' | head -20)
el "tests done"
wait
for r in 1 2; do
	for d in ${DEPTHS:-3000 8192 16384 30000}; do
		for c in 1 0; do
			printf 'round %s d%s clusters=%s: ' $r $d $c
			EMBER_CUDA_DEC1L_CLUSTERS=$c timeout -s KILL 100 "$E" bench -m /tmp/q4.gguf -backend cuda -p 0 -n 64 -d $d -r 3 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8
		done
	done
done
el done
