#!/bin/sh
# llamacpp-src.sh: pack the llama.cpp source that npm's node-llama-cpp ships (its
# llama/gitRelease.bundle: the release its prebuilt binaries, our CPU anchors, were built
# from) into bin/llamacpp-src.tar.xz (~4 MB), trimmed to what a CUDA build of llama-bench
# needs, for build/llamacpp-gpu.sh on a GPU machine that has CMake, ninja and nvcc but no
# network.
#
#   NLC_DIR=/tmp/nlc build/llamacpp-src.sh
#
# (install node-llama-cpp once: mkdir -p /tmp/nlc && cd /tmp/nlc && npm init -y &&
# npm i -E node-llama-cpp@3.21.1)
set -eu
cd "$(dirname "$0")/.."
: "${NLC_DIR:?set NLC_DIR to the node-llama-cpp install}"
bundle=$NLC_DIR/node_modules/node-llama-cpp/llama/gitRelease.bundle
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git clone -q "$bundle" "$tmp/clone"
mkdir -p "$tmp/lsrc"
(cd "$tmp/clone" && git log -1 --format='%H %ci' >"$tmp/lsrc/COMMIT" &&
	cp -r CMakeLists.txt LICENSE cmake ggml src include common tools vendor licenses "$tmp/lsrc/")
# Backends and tools the build leaves out (they are added only when switched on).
for b in vulkan sycl opencl cann hexagon metal musa hip webgpu zdnn zendnn openvino virtgpu et blas rpc; do
	rm -rf "$tmp/lsrc/ggml/src/ggml-$b"
done
rm -rf "$tmp/lsrc/tools/ui"
mkdir -p bin
tar cJf bin/llamacpp-src.tar.xz -C "$tmp" lsrc
ls -l bin/llamacpp-src.tar.xz
