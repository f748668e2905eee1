#!/bin/sh
# (Ran: every body the same but attention_short.ptx, whose differs by the mov of 1 and
# register numbers alone; all 17 committed from its ptx.tar.xz.)
# s65-call6.sh: every module's PTX made again on the H200 after mbar.cuh (mvs.cu's and
# attention_short.cu's mbarrier and bulk-copy helpers in one header): a new .cuh changes
# every module's sources hash. Returns all 17 in ptx.tar.xz and says which bodies (all but
# the hash line) differ from the committed PTX: attention_short.ptx alone is expected to
# (its barriers' count of 1 now a register operand: the same SASS with nvcc 12.4's ptxas).
set -u
L=${OUT:-/tmp/s65c6}
mkdir -p "$L"
T0=$(date +%s)
sh build/ptx-copy.sh /tmp/px || echo "PTX FAILED"
(cd /tmp/px && tar cJf "$L/ptx.tar.xz" *.ptx)
echo "[$(($(date +%s) - T0)) s] ptx done"
for f in kernels/cuda/*.ptx; do
	m=$(basename "$f")
	tail -n +2 "$f" >/tmp/body.a
	tail -n +2 "/tmp/px/$m" >/tmp/body.b
	cmp -s /tmp/body.a /tmp/body.b && echo "same body: $m" || echo "body differs: $m ($(diff /tmp/body.a /tmp/body.b | grep -c '^[<>]') lines)"
done
