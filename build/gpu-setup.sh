# gpu-setup.sh: sourced by the GPU machine's scripts (next-gpu.sh, carve-gpu.sh) from
# the repository root: unpacks bin/dev (build/dev-build.sh, carried) and writes the
# synthetic models named in $MODELS (q4: Llama-3.1-8B Q4_K_M, q8: its Q8_0, v2:
# DeepSeek-V2-Lite Q4_K_M) to /tmp in the background (the caller waits). Sets R (the
# repository root), L ($OUT or $1) and E (the ember binary), and the bench readers q
# (tg128 or the last figure), p (pp512's two columns) and s (the serving run's tok/s).
R=$PWD L=${OUT:-$1}
mkdir -p "$L"
for f in bin/dev/*.xz; do [ -e "$f" ] && xz -d -f "$f"; done
chmod +x bin/dev/*
E=$R/bin/dev/ember
for m in ${MODELS:-q4 q8 v2}; do
	[ -s /tmp/$m.gguf ] && continue # written by an earlier call on this machine
	case $m in
	q4) $E synth /tmp/q4.gguf -preset llama3.1-8b -ftype q4_k_m >/dev/null 2>&1 & ;;
	q8) $E synth /tmp/q8.gguf -preset llama3.1-8b -ftype q8_0 >/dev/null 2>&1 & ;;
	v2) $E synth /tmp/v2.gguf -preset deepseek-v2-lite -ftype q4_k_m >/dev/null 2>&1 & ;;
	esac
done
q() { timeout -s KILL 100 "$@" 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' '; }
p() { timeout -s KILL 100 "$@" 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f7,8 | tr -d ' '; }
s() { timeout -s KILL 120 "$@" 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f6; }
