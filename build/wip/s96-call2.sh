# s96-call2.sh: route64 alone (norm1-split dropped: +0.07% on the 8B, -0.5% on V2-Lite
# in call 1), its moe.ptx and sm_90 cubin embedded: the four TestMoERouting tests (call
# 1's group was killed at 300 s inside them; each takes ~100 s), the deepseek2 CUDA
# tests and V2-Lite tg128 against $EMBER_CUDA_ROUTE_WIDE=1. Before it: TESTS="cuda
# deepseek2" sh build/dev-build.sh; the plain hold-out; carry bin/dev.
set -u
MODELS="v2" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
tgroup 0 'TestMoERouting$|TestMoERoutingWide' 330
tgroup 1 'TestMoERoutingNoGuess|TestMoERoutingSmallGrid' 330
(cd inference/model/deepseek2 && timeout -s KILL 330 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3 | sed 's/^/deepseek2: /' >>"$OUT/log.txt") &
wait
gsum tests 0 1
sweep 5 v2 "EMBER_CUDA_ROUTE_WIDE=1 $E" "$E" 2>&1 | tee -a "$OUT/log.txt"
lg done
