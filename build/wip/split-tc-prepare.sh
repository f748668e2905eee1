#!/bin/sh
# split-tc-prepare.sh: readies the tree for build/wip/s85-call2.sh (attention_split1 on the
# tensor cores, written in session 85, not yet run on a GPU: no machine came). Applies
# build/wip/split-tc.patch (attention_split1 moved to its own module attention_split1.cu,
# the shared helpers to attention_split.cuh, SPLIT_TC, TestSplit1TC), makes the two
# modules' PTX with the local nvcc (CUDA 12.4 in /opt/bin: the binaries must embed an
# attention_split1.ptx for the module to load at all; the device's PTX replaces both
# after the call) and rewrites every other module's hash line (the new header changes
# every hash, no other body: build/ptx-rehash.sh), then builds bin/dev with the CUDA
# tests. Then hold testdata's golden, vocab and tokenizers out and run the call.
set -eu
cd "$(dirname "$0")/../.."
git apply build/wip/split-tc.patch
rm -rf /tmp/stc && mkdir -p /tmp/stc && cp kernels/cuda/*.cu kernels/cuda/*.cuh /tmp/stc/
PATH=/opt/bin:$PATH sh build/ptx-one.sh /tmp/stc attention_split
PATH=/opt/bin:$PATH sh build/ptx-one.sh /tmp/stc attention_split1
cp /tmp/stc/attention_split.ptx /tmp/stc/attention_split1.ptx kernels/cuda/
sh build/ptx-rehash.sh
go test -count=1 -run 'TestPTXMatchesSources|TestModulesAreTheSources' ./kernels/cuda/
TESTS=cuda sh build/dev-build.sh
