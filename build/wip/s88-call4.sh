# Applies build/wip/split1-half-sm.patch first (git apply), then TESTS=cuda sh build/dev-build.sh.
# s88-call4.sh: attention_split1 sized to half an SM (split1Smem) on the compatibility
# kernels held to an RTX card's 99 KiB (47 KiB a block: no K ring at 16,384 for the 8B),
# against the two-launch split it replaced there (EMBER_CUDA_SPLIT2=1): the split tests
# at 99 KiB, then 8B tg128 after 16,384 and 32,768. ~150 s.
set -u
MODELS="q4" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
export EMBER_CUDA_COMPAT=1 EMBER_CUDA_SMEM_LIMIT=101376
tgroup 0 'TestSplit1TC' 85
tgroup 1 'TestSplitAttention|TestFusedAttentionQ8K' 85
wait
for g in 0 1; do
	lg "g$g: $(grep -E -c -- '^--- PASS' /tmp/g$g.log) pass, $(grep -E -c -- '--- FAIL' /tmp/g$g.log) fail, $(grep -E -c -- '--- SKIP' /tmp/g$g.log) skip; $(grep -E -- '^(=== RUN|--- )' /tmp/g$g.log | tail -1)"
	grep -E -B3 -A8 -- '--- FAIL|panic' /tmp/g$g.log | head -20 >>"$OUT/log.txt"
done
grep -E 'values differ' /tmp/g0.log | tee -a "$OUT/log.txt"
while [ ! -s /tmp/q4.gguf ] || pgrep -f "ember synth" >/dev/null; do sleep 2; done
tg() { timeout -s KILL 40 env "$@" bench -m /tmp/q4.gguf -backend cuda -p 0 -n 128 -d $d -r 1 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' '; }
for d in 16384 32768; do lg "8B 99K d$d: split1 $(tg "$E") two-launch $(tg EMBER_CUDA_SPLIT2=1 "$E")"; done
lg done
