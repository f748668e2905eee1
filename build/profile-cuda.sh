#!/bin/sh
# profile-cuda.sh: where a decode step's time goes on the GPU, kernel by kernel, with
# Nsight Compute (ncu) reading each kernel of one step alone (no overlap, so the sum is
# above the step's time in a graph; the split is what it is for).
#
#   build/profile-cuda.sh EMBER MODEL OUTDIR [bench flags...]
#
# Runs `EMBER bench -m MODEL -backend cuda FLAGS` once with EMBER_CUDA_STATS to count its
# batches, then again under ncu with EMBER_CUDA_PROFILE_RANGE set to two batches near
# the end (decode steps), and writes OUTDIR/kernels.csv (ncu's durations) and
# OUTDIR/summary.txt (us per kernel name and grid, summed over the two steps and halved).
# With DETAIL=regex, also ncu's full sections for the first kernel matching it in those
# steps (OUTDIR/detail.txt); with SASS=1, DETAIL is a list of them and each one's SASS
# instructions are counted (build/sass-top.py: by opcode and by hot stretch of code).
set -u
# A batch is a whole step only when the queue is not flushed in chunks (graph.go).
export EMBER_CUDA_CHUNK=0
E=$1 M=$2 O=$3
shift 3
mkdir -p "$O"
NCU=${NCU:-ncu}
n=$(EMBER_CUDA_STATS=1 "$E" bench -m "$M" -backend cuda "$@" 2>&1 | tee "$O/stats.txt" |
	sed -n 's/.* kernels in \([0-9]*\) batches.*/\1/p' | tail -1)
[ -n "$n" ] || { echo "no batch count"; tail -20 "$O/stats.txt"; exit 1; }
# AT: where in the run, as a percentage of its batches (default: 20 batches before
# the end, a decode step of a one-stream run); a serving run's last steps have fewer
# streams left, and its untimed warmup round (the default since session 30) comes first
# and doubles the batches, so AT=75 finds the measured round's full decode steps (AT=50
# lands in its prompts: session 32).
if [ -n "${AT:-}" ]; then a=$((n * AT / 100)); else a=$((n - 20)); fi
b=$((a + 2))
echo "batches: $n; profiling $a to $((b - 1))"
EMBER_CUDA_PROFILE_RANGE=$a:$b "$NCU" --profile-from-start off --clock-control none \
	--metrics gpu__time_duration.sum,dram__bytes_read.sum --csv "$E" bench -m "$M" -backend cuda "$@" >"$O/kernels.csv" 2>"$O/ncu.err"
python3 - "$O/kernels.csv" >"$O/summary.txt" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
hdr = rows[0]; ki = hdr.index("Kernel Name"); vi = hdr.index("Metric Value"); ui = hdr.index("Metric Unit")
gi = hdr.index("Grid Size"); ii = hdr.index("ID"); mi = hdr.index("Metric Name")
scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1, "usecond": 1, "ms": 1e3, "msecond": 1e3,
         "byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "GB": 1e9}
# one launch per ID: its duration (us) and the bytes it read from DRAM
dur = {}; byt = collections.defaultdict(float); name = {}
for r in rows[1:]:
    v = float(r[vi].replace(",", "")) * scale.get(r[ui], 1)
    if r[mi].startswith("gpu__time"):
        dur[r[ii]] = v
    else:
        byt[r[ii]] = v
    name[r[ii]] = r[ki].split("(")[0][:70] + " " + r[gi].replace(" ", "")
tot = collections.defaultdict(float); tb = collections.defaultdict(float); cnt = collections.Counter()
for i, k in name.items():
    tot[k] += dur.get(i, 0) / 2; tb[k] += byt[i] / 2; cnt[k] += 1
# the first step's launches in order (OUTDIR/launches.txt)
with open(sys.argv[1].rsplit("/", 1)[0] + "/launches.txt", "w") as f:
    ids = sorted(name, key=lambda i: int(i))
    for i in ids[: len(ids) // 2]:
        d = dur.get(i, 0)
        f.write(f"{d:8.2f} us {byt[i]/1e6:8.2f} MB {byt[i]/max(d,1e-9)/1e6:5.2f} TB/s  {name[i]}\n")
s = sum(tot.values()); sb = sum(tb.values())
print(f"one step: {s:.1f} us over {sum(cnt.values())//2} kernels (each alone), {sb/1e6:.1f} MB read from DRAM, {sb/s/1e6:.2f} TB/s overall")
for k, v in sorted(tot.items(), key=lambda x: -x[1]):
    print(f"{v:9.1f} us {100*v/s:5.1f}% {cnt[k]//2:5d} launches {v/max(1,cnt[k]/2):8.2f} us each {tb[k]/1e6:8.2f} MB {tb[k]/max(v,1e-9)/1e6:5.2f} TB/s  {k}")
PY
cat "$O/summary.txt" | head -40
if [ -n "${DETAIL:-}" ] && [ -n "${SASS:-}" ]; then
	# SASS=1: DETAIL is a space-separated list of kernel name regexes; for each, ncu's
	# full set of the first launch matching it (OUTDIR/detail-N.ncu-rep and its details
	# page detail-N.txt), its source page (each SASS instruction's executions and stall
	# samples: sass-N.csv) and build/sass-top.py's reading of it (sass-top-N.txt).
	for k in $DETAIL; do
		n=$(echo "$k" | tr -c 'A-Za-z0-9_\n' _)
		EMBER_CUDA_PROFILE_RANGE=$a:$b "$NCU" --profile-from-start off --clock-control none -k "regex:$k" -c 1 \
			--set full --import-source yes -f -o "$O/detail-$n" "$E" bench -m "$M" -backend cuda "$@" >"$O/detail-$n.log" 2>&1
		"$NCU" -i "$O/detail-$n.ncu-rep" --page details >"$O/detail-$n.txt" 2>&1
		"$NCU" -i "$O/detail-$n.ncu-rep" --page source --csv --print-source sass >"$O/sass-$n.csv" 2>&1
		python3 "$(dirname "$0")/sass-top.py" "$O/sass-$n.csv" >"$O/sass-top-$n.txt" 2>&1
		echo "== $k"
		head -25 "$O/sass-top-$n.txt"
	done
elif [ -n "${DETAIL:-}" ]; then
	EMBER_CUDA_PROFILE_RANGE=$a:$b "$NCU" --profile-from-start off --clock-control none -k "regex:$DETAIL" -c 1 \
		--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
		--section WarpStateStats --section SchedulerStats --section SourceCounters --section ComputeWorkloadAnalysis \
		"$E" bench -m "$M" -backend cuda "$@" >"$O/detail.txt" 2>&1
	grep -v '^==PROF==' "$O/detail.txt" | tail -150
fi
# The readable results in one file (the device tool brings back at most 8 files):
# OUTDIR/prof.tar.gz holds summary.txt, launches.txt, detail*.txt, sass-top-*.txt and
# sass-*.csv (read locally with build/sass-top.py). With PACK=1 the rest (the .ncu-rep
# reports, kernels.csv, the logs) is deleted, leaving prof.tar.gz and summary.txt.
(cd "$O" && tar czf prof.tar.gz $(ls summary.txt launches.txt detail*.txt sass-top-*.txt sass-*.csv 2>/dev/null))
if [ -n "${PACK:-}" ]; then
	(cd "$O" && for f in *; do case $f in prof.tar.gz | summary.txt) ;; *) rm -rf "$f" ;; esac; done)
fi
