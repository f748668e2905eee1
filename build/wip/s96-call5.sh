# s96-call5.sh: the routing tests on one backend each (testMoERouting made a backend for
# every case and run: ~56 starts of ~1 s), on the committed kernels: their passes and
# times. Before it: git apply build/wip/moe-test-onebe.patch; TESTS="cuda" sh
# build/dev-build.sh, then remove bin/dev/ember.xz; the plain hold-out; carry bin/dev.
set -u
MODELS=none . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
cd inference/backend/cuda && timeout -s KILL 85 "$R/bin/dev/cuda.test" -test.v -test.run 'TestMoERouting' >/tmp/g.log 2>&1
lg "rc $?: $(grep -E '^(--- |ok|FAIL|PASS)' /tmp/g.log | tr '\n' ' ')"
grep -E -A6 -- '--- FAIL|panic' /tmp/g.log | head -30 | tee -a "$OUT/log.txt"
