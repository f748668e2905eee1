#!/usr/bin/env bash
# build/test-arm64.sh: the NEON kernels' tests on an x86-64 machine (make test runs it):
# kernels/cpu's tests cross-compiled for arm64 and run under qemu's user mode, built for
# plain ARMv8-A and for ARMv8.2-A with the dot-product and FP16 extensions (Apple's
# M-series, recent ARM laptops and servers have both, and the kernels use sdot where the
# compiler may), then the goldens (llama.cpp's logits) and the backend conformance suite
# (three threads) on the NEON path of the second.
# Needs gcc-aarch64-linux-gnu, libc6-dev-arm64-cross and qemu-user (build/deps.sh --test).
# On an arm64 machine `go test` already runs the NEON path, so this does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(uname -m)" = x86_64 ] || { echo "test-arm64.sh: not an x86-64 machine; go test covers NEON here"; exit 0; }
export PATH=/usr/local/go/bin:$PATH
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
arm() { GOARCH=arm64 CGO_ENABLED=1 CC=aarch64-linux-gnu-gcc CGO_CFLAGS="-O2 $1" go test -c -o "$2" "$3"; }
# EMBER_CPU_MAP_WEIGHTS=1: the weights stay mapped (qemu's user mode cannot run the
# backend's huge-page copies).
run() { (cd "$1" && EMBER_CPU_MAP_WEIGHTS=1 QEMU_CPU=max qemu-aarch64 -L /usr/aarch64-linux-gnu "$2" -test.short "${@:3}"); }
arm "-march=armv8-a" "$tmp/cpu.test" ./kernels/cpu/
arm "-march=armv8.2-a+dotprod+fp16" "$tmp/cpu-dp.test" ./kernels/cpu/
arm "-march=armv8.2-a+dotprod+fp16" "$tmp/archs-dp.test" ./inference/model/archs/
arm "-march=armv8.2-a+dotprod+fp16" "$tmp/backend-dp.test" ./inference/backend/cpu/
echo "test-arm64.sh: kernels/cpu, ARMv8-A"
run kernels/cpu "$tmp/cpu.test"
echo "test-arm64.sh: kernels/cpu, ARMv8.2-A + dotprod + fp16"
run kernels/cpu "$tmp/cpu-dp.test"
echo "test-arm64.sh: the goldens on NEON"
run inference/model/archs "$tmp/archs-dp.test" -test.run 'TestGoldensCPU/neon'
echo "test-arm64.sh: the CPU backend's conformance suite on NEON"
run inference/backend/cpu "$tmp/backend-dp.test" -test.run 'TestConformance/neon/t3'
