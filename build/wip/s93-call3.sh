# s93-call3.sh (session 93): the CUDA goldens (every architecture) on HEAD's embedded
# kernels (smem-split-scores landed), beside the synthetic models' writing; then the two
# targets' tg128 (-r 3). Needs bin/dev with TESTS="archs" and the deep hold-out.
set -u
MODELS="q4 v2" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader)"
(cd inference/model/archs && timeout -s KILL 240 "$R/bin/dev/archs.test" -test.v -test.run 'CUDA' >/tmp/gold.log 2>&1; echo "goldens rc $?") | tee -a "$OUT/log.txt" &
wait
grep -E -- '^(--- |ok|FAIL|PASS)' /tmp/gold.log | tail -30 >>"$OUT/log.txt"
grep -E -c -- '--- PASS' /tmp/gold.log | sed 's/^/golden passes: /' | tee -a "$OUT/log.txt"
lg "tests done"
lg "8B tg128 -r 3 $(q "$E" bench -m /tmp/q4.gguf -backend cuda -p 0 -n 128 -r 3)"
lg "V2-Lite tg128 -r 3 $(q "$E" bench -m /tmp/v2.gguf -backend cuda -p 0 -n 128 -r 3)"
timeout -s KILL 100 "$E" bench -m /tmp/q4.gguf -backend cuda -p 0 -n 128 -r 3 >>"$OUT/log.txt" 2>&1
lg done
