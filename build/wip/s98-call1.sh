# s98-call1.sh (session 98): the two targets' tg128 (-r 3) on HEAD's embedded kernels on
# whatever card came (the last H200 figures are session 91's), and V2-Lite Q5_K_M's,
# with the card's clocks sampled during the runs ($OUT/clocks.csv).
# Before it: TESTS="cuda" sh build/dev-build.sh; the plain hold-out; carry bin/dev.
set -u
MODELS="q4 v2 v5" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
# testMoERouting now asks routeKernel for its kernel (RouteKernel): its two main tests,
# while the models are written
(cd inference/backend/cuda && timeout -s KILL 240 "$R/bin/dev/cuda.test" -test.v -test.run 'TestMoERouting$|TestMoERoutingNoGuess' >"$OUT/moe-tests.txt" 2>&1)
lg "routing tests rc $?: $(grep -E '^(--- |ok|FAIL|PASS)' "$OUT/moe-tests.txt" | tr '\n' ' ')"
while pgrep -f "ember synth" >/dev/null; do sleep 1; done
# the SM and memory clocks and power every 100 ms while the benches run: does a
# latency-bound decode keep the card at its boost clock?
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 100 >"$OUT/clocks.csv" 2>&1 &
CK=$!
# b NAME MODEL: tg128 -r 3, the whole table in $OUT/NAME.txt, its last row's tok/s logged
b() { timeout -s KILL 150 "$E" bench -m /tmp/$2.gguf -backend cuda -p 0 -n 128 -r 3 >"$OUT/$1.txt" 2>&1; grep '^| ' "$OUT/$1.txt" | tail -1 | cut -d'|' -f8 | tr -d ' '; }
lg "8B tg128 -r 3 $(b q4 q4)"
lg "V2-Lite tg128 -r 3 $(b v2 v2)"
lg "V2-Lite Q5_K_M tg128 -r 3 $(b v5 v5)"
kill $CK
# the routing launch's grid (default three blocks an SM) against two and four an SM,
# V2-Lite, 3 rotated rounds (tuned on H100s since session 75)
# (H100 SXM and H200 both have 132 SMs)
sweep 3 v2 "$E" "EMBER_CUDA_ROUTE_GRID=264 $E" "EMBER_CUDA_ROUTE_GRID=528 $E" 2>&1 | tee -a "$OUT/log.txt"
lg done
