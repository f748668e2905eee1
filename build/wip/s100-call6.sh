# s100-call6.sh (session 100): timelines of V2-Lite and the 8B on HEAD (tg64's 40th
# batch, build/timeline-ptx.sh with timeline-cuh.py fixed for pdl_wait's EM_SM90 guard).
# Before it: TESTS="cuda" sh build/dev-build.sh; the plain hold-out; carry bin/dev.
set -u
MODELS="v2 q4" . build/gpu-setup.sh "$OUT"
sh build/timeline-ptx.sh /tmp/tl >/tmp/tl.log 2>&1 || { el "TL FAILED"; tail -5 /tmp/tl.log; }
while pgrep -f "ember synth" >/dev/null; do sleep 1; done
tl tl_v2.log v2
tl tl_q4.log q4
el done
