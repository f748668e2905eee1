# s82-call5.sh: attention_mla2 (a prompt's latent attention at depth, two tokens a block;
# session 82). Prepare: the kernel's PTX in kernels/cuda (any nvcc: the binary only needs
# the module's name), TESTS=cuda sh build/dev-build.sh; hold testdata's golden, vocab and
# tokenizers out; carry bin/dev. Makes attention_mla2.ptx with this machine's nvcc
# (returned in $OUT), runs its test against attention_mla, then V2-Lite pp512 at depth
# with and without it.
set -u
MODELS="v2" . build/gpu-setup.sh "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader
sh build/ptx-copy.sh /tmp/px attention_mla2 || { el "PTX failed"; tail /tmp/px/attention_mla2.log; exit 1; }
cp /tmp/px/attention_mla2.ptx "$OUT/"
export EMBER_CUDA_PTX_DIR=/tmp/px
el "ptx made"
(cd inference/backend/cuda && timeout -s KILL "${TLIM:-70}" "$R/bin/dev/cuda.test" -test.run 'TestAttentionMLA2|TestKernelNamesExist' -test.v 2>&1 |
	tee "$L/tests.log" | grep -E '^(--- |ok|FAIL|PASS|panic)|attention_mla' | head -20)
el "tests done"
wait
for d in ${DEPTHS:-8192}; do
	for o in 1 ""; do
		printf 'd%s no_mla2=%s: ' $d "$o"
		EMBER_CUDA_NO_MLA2=$o timeout -s KILL 60 "$E" bench -m /tmp/v2.gguf -backend cuda -p 512 -n 0 -d $d -r 2 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8
	done
done
el done
