# s97-call2.sh (written in session 96): build/wip/route-variants.patch's three variants
# of mmv_route_q4_k_64s (r: the lane-0 fallback sum rolled, 3,000 SASS instructions
# against 3,120 with nvcc 12.4; n: the guess a called function; f: the routing a called
# function; the same bits) on fresh PTX: every module's PTX and the sm_90 cubins
# (brought back), the routing tests (one backend each) and deepseek2's CUDA tests on
# it, then V2-Lite tg128, 4 rotated rounds, each variant against the committed kernel;
# and the patch's mmv_route_q5_k_64s on V2-Lite Q5_K_M against $EMBER_CUDA_ROUTE_WIDE=1
# (mmv_route_q5_k), 4 rounds.
# Only moe.cu changes; the other kernels' PTX bodies are the committed ones (checked
# with nvcc 12.4). Before it: git apply build/wip/route-variants.patch on a tree without
# moe-test-onebe.patch (it holds that patch too; once that one has landed, git apply -3); TESTS="cuda deepseek2" sh build/dev-build.sh; the plain
# hold-out; carry bin/dev. (Session 97: the routing tests in two groups of 240 s; each
# takes ~70 s alone on an H100, the one-backend form did not shorten them.) Land a variant only if it gains >= 0.5% in the medians: its
# kernel in place of mmv_route_q4_k_64s's code, the others dropped.
set -u
MODELS="v2 v5" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
ptx_all /tmp/px
cubin_all /tmp/px
export EMBER_CUDA_PTX_DIR=/tmp/px
tgroup 0 'TestMoERoutingVariants' 240
tgroup 1 'TestMoERouting$|TestMoERoutingNoGuess' 240
(cd inference/model/deepseek2 && timeout -s KILL 240 "$R/bin/dev/deepseek2.test" -test.run 'CUDA' 2>&1 | tail -3 | sed 's/^/deepseek2: /' >>"$OUT/log.txt") &
wait
gsum tests 0 1
N="EMBER_CUDA_PTX_DIR=/tmp/px $E"
sweep 4 v2 "$N" "EMBER_CUDA_ROUTE_VARIANT=r $N" "EMBER_CUDA_ROUTE_VARIANT=n $N" "EMBER_CUDA_ROUTE_VARIANT=f $N" 2>&1 | tee -a "$OUT/log.txt"
sweep 4 v5 "EMBER_CUDA_ROUTE_WIDE=1 $N" "$N" 2>&1 | tee -a "$OUT/log.txt"
lg done
