#!/bin/sh
# deep hold-out for an archs goldens call: vocab, tokenizers, PTX, sm80/sm90, build/wip, assets' gguf
set -e
cd /work/main
case "$1" in
out)
  mkdir -p /tmp/held2/ptx
  mv testdata/vocab testdata/tokenizers kernels/cuda/sm80 kernels/cuda/sm90 build/wip /tmp/held2/
  mv kernels/cuda/*.ptx /tmp/held2/ptx/
  ;;
in)
  mv /tmp/held2/vocab /tmp/held2/tokenizers testdata/
  mv /tmp/held2/sm80 /tmp/held2/sm90 kernels/cuda/
  mv /tmp/held2/wip build/
  mv /tmp/held2/ptx/*.ptx kernels/cuda/
  ;;
esac
git status --short | wc -l
