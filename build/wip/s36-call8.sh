#!/bin/sh
# s36-call8.sh: the engine's tests on the GPU machine with the session's final code and
# the committed PTX: TestAheadCUDA (steps ahead against SyncSteps, on the GPU) and the
# rest of the package (the CPU backends). bin/dev built with TESTS="engine". ~2 minutes.
set -u
export MODELS=" "
. build/gpu-setup.sh "${OUT:-/tmp/s36c8}"
cd inference/engine && timeout -s KILL 300 "$R/bin/dev/engine.test" -test.v >/tmp/engine.log 2>&1
echo "rc $?: $(grep -c -- '^--- PASS' /tmp/engine.log) pass, $(grep -c -- '--- FAIL' /tmp/engine.log) fail, $(grep -c -- '--- SKIP' /tmp/engine.log) skip"
grep -E -- '--- FAIL|TestAheadCUDA|ahead_test' /tmp/engine.log | head -12
