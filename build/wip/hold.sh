#!/bin/sh
set -e
cd /work/main
case "$1" in
out)
  mkdir -p /tmp/held/golden /tmp/held/ptx
  mv testdata/vocab testdata/tokenizers /tmp/held/
  for f in testdata/golden/*; do
    b=$(basename "$f")
    case "$b" in deepseek2-*|README.md) ;; *) mv "$f" /tmp/held/golden/ ;; esac
  done
  mv kernels/cuda/*.ptx /tmp/held/ptx/
  ;;
in)
  mv /tmp/held/vocab /tmp/held/tokenizers testdata/
  mv /tmp/held/golden/* testdata/golden/
  mv /tmp/held/ptx/*.ptx kernels/cuda/
  ;;
esac
git status --short | head
