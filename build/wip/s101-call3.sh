# s101-call3.sh (session 101): the committed PTX and cubins (embedded: no
# EMBER_CUDA_PTX_DIR) under the CUDA goldens of every architecture, conformance, the
# fused add-norm bits test whole (its 200 s limit killed it in call 1 and in earlier
# sessions), and the fusion and sampling groups again.
# Before it: TESTS="cuda archs" sh build/dev-build.sh; the deep hold-out; carry bin/dev.
set -u
MODELS=" " . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv,noheader)"
tgroup 0 'TestFusedAddRMSNorm' 450
tgroup 1 'Conformance' 300
tgroup 2 'TestArgMax|TestNorm1|TestFused|TestSample|TestTopK|TestFeeder|TestMoE' 300
(cd inference/model/archs && timeout -s KILL 300 "$R/bin/dev/archs.test" -test.v -test.run 'TestGoldensCUDA' >/tmp/gold.log 2>&1; echo "goldens rc $?: $(grep -c -- '--- PASS' /tmp/gold.log) pass, $(grep -c -- '--- FAIL' /tmp/gold.log) fail, $(grep -c -- '--- SKIP' /tmp/gold.log) skip") | tee -a "$OUT/log.txt" &
wait
gsum tests 0 1 2
cp /tmp/g0.log /tmp/g1.log /tmp/g2.log /tmp/gold.log "$OUT/" 2>/dev/null
lg done
