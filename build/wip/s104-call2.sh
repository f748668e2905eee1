# s104-call2.sh (session 104): the tests call 1's group limit cut off, on the committed
# (embedded) PTX and cubins of 358d4cd: TestFusedAddRMSNormMVS (mvs's body changed),
# TestMoEQ5PBits and TestWidenQ5Products (mv1_q5p through mv1_pair; its body unchanged).
# Before it: TESTS="cuda" sh build/dev-build.sh; /tmp/hold.sh out; carry bin/dev.
set -u
MODELS=" " . build/gpu-setup.sh "$OUT"
lg() { el "$*" | tee -a "$OUT/log.txt"; }
lg "$(nvidia-smi --query-gpu=name --format=csv,noheader)"
tgroup 0 'TestFusedAddRMSNormMVS|TestMoEQ5PBits|TestWidenQ5Products|TestKernelNamesExist|TestCubinsLoad' 200
wait
gsum tests 0
grep -E -- '^--- ' /tmp/g0.log | tee -a "$OUT/log.txt"
