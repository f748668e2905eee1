# s97-call1.sh (written in session 96 for the next session's first call): the routing
# tests on one backend each (build/wip/moe-test-onebe.patch: their passes and times),
# then the two targets' tg128 (-r 3) on HEAD's embedded kernels on whatever card came
# (the last H200 figures are session 91's). Before it: git apply
# build/wip/moe-test-onebe.patch; TESTS="cuda" sh build/dev-build.sh; the plain hold-out;
# carry bin/dev. ~4 minutes on a fresh machine.
set -u
MODELS="q4 v2" . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader)"
(cd inference/backend/cuda && timeout -s KILL 200 "$R/bin/dev/cuda.test" -test.v -test.run 'TestMoERouting' >/tmp/g.log 2>&1)
lg "routing tests rc $?: $(grep -E '^(--- |ok|FAIL|PASS)' /tmp/g.log | tr '\n' ' ')"
grep -E -A6 -- '--- FAIL|panic' /tmp/g.log | head -30 | tee -a "$OUT/log.txt"
while pgrep -f "ember synth" >/dev/null; do sleep 1; done
lg "8B tg128 -r 3 $(q "$E" bench -m /tmp/q4.gguf -backend cuda -p 0 -n 128 -r 3)"
lg "V2-Lite tg128 -r 3 $(q "$E" bench -m /tmp/v2.gguf -backend cuda -p 0 -n 128 -r 3)"
lg done
