# s99-call1.sh (session 99): s98-call2.sh (idsum.patch tested and timed: every module's
# PTX and sm_90 cubins made there, the routing and deepseek2 CUDA tests, the IDSUM
# sweep of 4 rounds, both targets' tg128 -r 3 with the clocks sampled), then the routing
# launch's grid (three blocks an SM) against two and four an SM, V2-Lite, 3 rounds
# (~450 s on a fresh machine). Before it: as s98-call2.sh.
. build/wip/s98-call2.sh
sweep 3 v2 "$N" "EMBER_CUDA_ROUTE_GRID=264 $N" "EMBER_CUDA_ROUTE_GRID=528 $N" 2>&1 | tee -a "$OUT/log.txt"
lg "grid sweep done"
