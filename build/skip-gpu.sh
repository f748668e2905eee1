#!/bin/sh
# skip-gpu.sh: which launch of a DeepSeek-V2-Lite batch-1 step, left out, shortens it
# (EMBER_CUDA_SKIP: the results are wrong, the timing is the chain's without it). For
# each entry, tg128 (medians of 3) beside the whole step, two rounds; "name$" is that
# kernel only, "name@N" its launches of N blocks in x (profile-cuda.sh's grids: the
# routed gate/up experts are mmv_id_q4_k@528, the q heads mmv_id_q4_k@128 with y 2, v_b
# mmv_id_q4_k@128 too). Session 26's profile of the step is in NOTES.md. ~8 minutes.
# Carry bin/dev (build/dev-build.sh). MODEL=q4 runs Llama-3.1-8B Q4_K_M's instead.
set -u
MODELS=${MODEL:-v2}
. build/gpu-setup.sh /tmp/skip-gpu
wait
M=/tmp/$MODELS.gguf
if [ "$MODELS" = v2 ]; then
	SKIPS="add_rms_norm_q8_k mmv_multi mmv_id_q4_k@528 mmv_id_q4_k@128 mla_kv quant_q8$ quant_q8_k$ mmv_id_q5_0 mmv_id_q8_0 rope2_set attention_short get_rows_q8_k mmv_q4_k_1 mmv_q6_k_1 mmv_f32_1 moe_topk swiglu_q8$ swiglu_q8_k moe_sum_add"
else
	SKIPS="add_rms_norm_q8_k mmv_multi mmv_q4_k_1 mmv_q6_k_1 attention_dec rope2_set swiglu_q8_k"
fi
for r in 1 2; do
	echo "whole step $(q "$E" bench -backend cuda -m $M -p 0 -n 128 -r 3)"
	for k in $SKIPS; do
		echo "without $k $(EMBER_CUDA_SKIP=$k q "$E" bench -backend cuda -m $M -p 0 -n 128 -r 3)"
	done
done
