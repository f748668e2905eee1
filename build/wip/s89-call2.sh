# s89-call2.sh (session 89, second call on call 1's warm machine; ~380 s): split1 sized
# to half an SM (split1-half-sm.patch) on the compatibility kernels at an RTX card's 99
# KiB: the split tests, then 8B tg128 after 16,384 and 32,768 against the two-launch
# split (EMBER_CUDA_SPLIT2=1) and the Hopper kernels; then the Hopper kernels' 8B and
# V2-Lite pp512/tg128 and two more tg128 runs each.
set -u
MODELS="q4 v2" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
(
	export EMBER_CUDA_COMPAT=1 EMBER_CUDA_SMEM_LIMIT=101376
	tgroup 0 'TestSplit1TC|TestSplit1Plan' 110
	tgroup 1 'TestSplitAttention|TestFusedAttentionQ8K' 110
	wait
)
gsum "compat 99K" 0 1
grep -E 'values differ' /tmp/g0.log | tee -a "$OUT/log.txt"
while pgrep -f "ember synth" >/dev/null; do sleep 2; done
lg "models: $(ls /tmp/*.gguf | tr '\n' ' ')"
tg() { timeout -s KILL 60 env "$@" bench -m /tmp/q4.gguf -backend cuda -p 0 -n 128 -d $d -r 1 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' '; }
for d in 16384 32768; do lg "8B compat 99K d$d: split1 $(tg EMBER_CUDA_COMPAT=1 EMBER_CUDA_SMEM_LIMIT=101376 "$E") two-launch $(tg EMBER_CUDA_COMPAT=1 EMBER_CUDA_SMEM_LIMIT=101376 EMBER_CUDA_SPLIT2=1 "$E") hopper $(tg "$E")"; done
for m in q4 v2; do
	lg "$m hopper pp512/tg128: $(p "$E" bench -m /tmp/$m.gguf -backend cuda -p 512 -n 128 -r 1) tg128: $(q "$E" bench -m /tmp/$m.gguf -backend cuda -p 0 -n 128 -r 1) $(q "$E" bench -m /tmp/$m.gguf -backend cuda -p 0 -n 128 -r 1)"
done
lg done
