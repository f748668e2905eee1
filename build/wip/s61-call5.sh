#!/bin/sh
# s61-call5.sh: HEAD (04bc527, embedded PTX) on the H200: V2-Lite `bench -p 512 -n 128
# -r 3` and deepseek2's TestCUDANormRouter on the embedded PTX. Logs to $OUT.
set -u
export MODELS="v2"
. build/gpu-setup.sh "${OUT:-/tmp/s61c5}"
(cd inference/model/deepseek2 && timeout -s KILL 120 "$R/bin/dev/deepseek2.test" -test.v -test.run 'TestCUDANormRouter' 2>&1 | tail -3 >"$L/nr.log") &
wait
timeout -s KILL 150 "$E" bench -backend cuda -p 512 -n 128 -r 3 -m /tmp/v2.gguf >"$L/bench_v2.log" 2>&1
cat "$L/nr.log"; grep '^|' "$L/bench_v2.log"
el done
