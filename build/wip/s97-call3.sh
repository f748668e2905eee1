# s97-call3.sh (session 97): mmv_route_q5_k_64s landed alone (route-variants.patch's
# three mmv_route_q4_k_64s variants dropped: each lost ~1% in s97-call2). Every module's
# PTX and the sm_90 cubins of the final moe.cu (brought back), the routing tests and
# deepseek2's CUDA tests on them, then V2-Lite Q5_K_M (mmv_route_q5_k_64s against
# $EMBER_CUDA_ROUTE_WIDE=1) and Q4_K_M (unchanged kernel: a check) in rotated rounds, and
# both targets' tg128 -r 3. Before it: TESTS="cuda deepseek2" sh build/dev-build.sh; the
# plain hold-out; carry bin/dev.
set -u
MODELS="v5 v2 q4" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
ptx_all /tmp/px
cubin_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMoERouting$' 200
tgroup 1 'TestMoERoutingNoGuess|TestRouteKernel' 200
(cd inference/model/deepseek2 && timeout -s KILL 200 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3 | sed 's/^/deepseek2: /' >>"$OUT/log.txt") &
wait
gsum tests 0 1
N="EMBER_CUDA_PTX_DIR=/tmp/px $E"
sweep 5 v5 "EMBER_CUDA_ROUTE_WIDE=1 $N" "$N" 2>&1 | tee -a "$OUT/log.txt"
lg "8B tg128 -r 3 $(q "$E" bench -m /tmp/q4.gguf -backend cuda -p 0 -n 128 -r 3)"
lg "V2-Lite tg128 -r 3 $(q "$E" bench -m /tmp/v2.gguf -backend cuda -p 0 -n 128 -r 3)"
lg "V2-Lite Q5_K_M tg128 -r 3 $(q "$E" bench -m /tmp/v5.gguf -backend cuda -p 0 -n 128 -r 3)"
lg done
