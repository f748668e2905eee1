# ncu-stalls.py RAW.csv[.xz]: reads Nsight Compute's raw page (--csv --page raw, with
# the WarpStateStats section and gpu__time_duration.sum, smsp__inst_executed.sum: see
# build/wip/s97-call4.sh) of two decode steps and prints, per kernel name, its time a
# step (each launch alone), its launches, and how its warps' stall cycles split over
# the main reasons (each launch's shares weighted by its duration), then the step's.
import csv, sys, collections
import lzma
op = lzma.open if sys.argv[1].endswith(".xz") else open
lines=op(sys.argv[1], "rt").read().splitlines()
i=[k for k,l in enumerate(lines) if l.startswith('"ID"')][0]
rows=list(csv.reader(lines[i:]))
hdr=rows[0]; units=rows[1]; data=[r for r in rows[2:] if len(r)==len(hdr)]
c={h:j for j,h in enumerate(hdr)}
reasons=[h for h in hdr if h.startswith('smsp__average_warps_issue_stalled_') and h.endswith('_per_issue_active.ratio')]
short=lambda h:h[len('smsp__average_warps_issue_stalled_'):-len('_per_issue_active.ratio')]
def f(r,h):
    v=r[c[h]].replace(',','')
    try: return float(v)
    except: return 0.0
du=units[c['gpu__time_duration.sum']]
sc={'ns':1e-3,'nsecond':1e-3,'us':1,'usecond':1,'ms':1e3,'msecond':1e3}[du]
agg=collections.defaultdict(lambda: collections.defaultdict(float)); cnt=collections.Counter()
for r in data:
    k=r[c['Kernel Name']].split('(')[0][:40]
    d=f(r,'gpu__time_duration.sum')*sc
    tot=sum(f(r,h) for h in reasons)
    agg[k]['dur']+=d/2; cnt[k]+=1
    agg[k]['inst']+=f(r,'smsp__inst_executed.sum')/2
    for h in reasons:
        agg[k][short(h)]+= d*(f(r,h)/tot if tot else 0)/2
T=sum(a['dur'] for a in agg.values())
print(f"step (each alone): {T:.1f} us, {sum(cnt.values())//2} launches; columns: us a step, % , launches, us each, then the share of warp stall cycles (us-weighted) for: no_instruction, imc_miss, branch_resolving, barrier, long_scoreboard, wait, short_scoreboard, membar")
cols=['no_instruction','imc_miss','branch_resolving','barrier','long_scoreboard','wait','short_scoreboard','membar']
tt=collections.defaultdict(float)
for k,a in sorted(agg.items(), key=lambda x:-x[1]['dur']):
    n=cnt[k]//2
    for x in cols: tt[x]+=a[x]
    print(f"{a['dur']:8.1f} {100*a['dur']/T:5.1f}% {n:4d} {a['dur']/n:6.2f}  "+" ".join(f"{100*a[x]/a['dur']:5.1f}" for x in cols)+f"  inst/launch {a['inst']/n:9.0f} {k}")
print("step shares: "+" ".join(f"{x} {100*tt[x]/T:.1f}%" for x in cols))
