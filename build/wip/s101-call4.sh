# s101-call4.sh (session 101): a timing probe of V2-Lite's routed products (wrong
# results: build/wip/halfbytes.py): the committed kernels (embedded) against matmul and
# moe made here with their odd blocks' weights read from the even ones (-DEMBER_HALF_ID:
# the downs, mmv_id_q8_0; -DEMBER_HALF_ROUTE: the gate/up, mmv_route), the other modules
# the committed PTX; tg128 rotated rounds. Half the bytes at the same round trips: a
# large gain says bytes bind them (packed Q5_0 downs would pay), none says round trips do.
# Before it: vocab, tokenizers and the non-deepseek2 goldens held out (the PTX stays);
# carry bin/dev with ember only.
set -u
MODELS="v2" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
rm -rf /tmp/hs && mkdir /tmp/hs && cp kernels/cuda/*.cu kernels/cuda/*.cuh /tmp/hs/ && python3 build/wip/halfbytes.py /tmp/hs || lg "EDIT FAILED"
for s in id route; do
	case $s in id) F=-DEMBER_HALF_ID ;; route) F=-DEMBER_HALF_ROUTE ;; esac
	rm -rf /tmp/p_$s /tmp/h_$s && mkdir /tmp/p_$s && cp -r /tmp/hs /tmp/h_$s && cp kernels/cuda/*.ptx /tmp/p_$s/
	for m in matmul moe; do (sh build/ptx-one.sh /tmp/h_$s $m $F && cp /tmp/h_$s/$m.ptx /tmp/p_$s/ || lg "PTX $s $m FAILED") & done
done
wait
lg "variants made"
while pgrep -f "ember synth" >/dev/null; do sleep 1; done
for s in p_id p_route; do lg "warm $s $(tg1 v2 "EMBER_CUDA_PTX_DIR=/tmp/$s $E")"; done
sweep 3 v2 "$E" "EMBER_CUDA_PTX_DIR=/tmp/p_id $E" "EMBER_CUDA_PTX_DIR=/tmp/p_route $E" 2>&1 | tee -a "$OUT/log.txt"
lg done
