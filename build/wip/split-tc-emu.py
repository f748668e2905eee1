# split-tc-emu.py: checks the index arithmetic of build/wip/split-tc.patch (attention_split1's
# tensor-core scores and p * V) on the CPU: ring stages in its swizzled layout, ldmatrix
# (plain and .trans) and mma.sync m16n8k16 emulated lane by lane as the PTX ISA defines
# their fragments, against direct sums; for head dims 64/128, groups of 1-8 heads and
# partial sub-chunks. Session 85: every case within 1e-14 (float64). python3 split-tc-emu.py
import random
random.seed(1)
CH=64  # SPLIT_CHUNK
def swz(tc,r,c): return c ^ ((r&7) if tc else ((r&1)<<2))
def emu(hd,G,cnt):
    K=[[random.uniform(-1,1) for _ in range(hd)] for _ in range(CH)]
    V=[[random.uniform(-1,1) for _ in range(hd)] for _ in range(CH)]
    Q=[[random.uniform(-1,1) for _ in range(hd)] for _ in range(G)]
    P=[[random.uniform(0,1) for _ in range(CH)] for _ in range(G)]
    def stage(rows):  # byte offset -> 8 values
        sm={}
        for r in range(CH):
            for c in range(hd//8):
                val = rows[r][8*c:8*c+8] if r < cnt else [0.0]*8
                sm[r*2*hd+16*swz(True,r,c)] = val
        return sm
    def ldsm(sm, addr_of_lane, trans):
        # returns regs[lane][j] = (lo, hi)
        regs=[[None]*4 for _ in range(32)]
        for j in range(4):
            M=[sm[addr_of_lane(8*j+i)] for i in range(8)]  # M[row][col]
            for T in range(32):
                if not trans: regs[T][j]=(M[T//4][2*(T%4)], M[T//4][2*(T%4)+1])
                else: regs[T][j]=(M[2*(T%4)][T//4], M[2*(T%4)+1][T//4])
        return regs
    def mma(acc,A,B0,B1):
        # build full A(16x16), B(16x8) from fragments, check consistency
        Am=[[None]*16 for _ in range(16)]; Bm=[[None]*8 for _ in range(16)]
        for T in range(32):
            g,t=T>>2,T&3
            for (reg,row,col) in ((0,g,2*t),(1,g+8,2*t),(2,g,2*t+8),(3,g+8,2*t+8)):
                Am[row][col],Am[row][col+1]=A[T][reg]
            Bm[2*t][g],Bm[2*t+1][g]=B0[T]; Bm[2*t+8][g],Bm[2*t+9][g]=B1[T]
        for T in range(32):
            g,t=T>>2,T&3
            for (i,row,col) in ((0,g,2*t),(1,g,2*t+1),(2,g+8,2*t),(3,g+8,2*t+1)):
                acc[T][i]+=sum(Am[row][k]*Bm[k][col] for k in range(16))
    # scores
    sm=stage(K)
    qb=[[None]*16 for _ in range(32)]
    for T in range(32):
        g,t=T>>2,T&3
        for ks in range(8):
            if 16*ks<hd:
                if g<G: r=Q[g][16*ks+2*t:]; qb[T][2*ks]=(r[0],r[1]); qb[T][2*ks+1]=(r[8],r[9])
                else: qb[T][2*ks]=(0,0); qb[T][2*ks+1]=(0,0)
    sc=[[None]*CH for _ in range(G)]
    for w in range(CH//16):
        d=[[0.0]*4 for _ in range(32)]
        for ks in range(hd//16):
            def addr(lane):
                j=lane>>3; r=16*w+(lane&7)+8*(j&1)
                return r*2*hd+16*swz(True,r,2*ks+(j>>1))
            a=ldsm(sm,addr,False)
            mma(d,a,[qb[T][2*ks] for T in range(32)],[qb[T][2*ks+1] for T in range(32)])
        for T in range(32):
            p=16*w+(T>>2)
            for h in range(2):
                g=2*(T&3)+h
                if g<G:
                    if p<cnt: sc[g][p]=d[T][h]
                    if p+8<cnt: sc[g][p+8]=d[T][2+h]
    err=0
    for g in range(G):
        for p in range(cnt):
            ref=sum(Q[g][i]*K[p][i] for i in range(hd))
            err=max(err,abs(sc[g][p]-ref))
    # PV
    sm=stage(V)
    out=[[None]*hd for _ in range(G)]
    def p2(g,p):
        if g>=G: return (0,0)
        return (P[g][p] if p<cnt else 0, P[g][p+1] if p+1<cnt else 0)
    for w in range(8):
        if 16*w>=hd: continue
        o=[[0.0]*4 for _ in range(32)]
        for kp in range(CH//16):
            if 16*kp>=cnt: break
            def addr(lane):
                j=lane>>3; r=16*kp+(lane&7)+8*(j>>1)
                return r*2*hd+16*swz(True,r,2*w+(j&1))
            a=ldsm(sm,addr,True)
            b0=[p2(T>>2,16*kp+2*(T&3)) for T in range(32)]
            b1=[p2(T>>2,16*kp+2*(T&3)+8) for T in range(32)]
            mma(o,a,b0,b1)
        for T in range(32):
            for h in range(2):
                g=2*(T&3)+h; dd=16*w+(T>>2)
                if g<G: out[g][dd]=o[T][h]; out[g][dd+8]=o[T][2+h]
    err2=0
    for g in range(G):
        for dd in range(hd):
            ref=sum(P[g][p]*V[p][dd] for p in range(cnt))
            err2=max(err2,abs(out[g][dd]-ref))
    # bank conflicts of the ldmatrix phases (non-trans, scores): 8 rows same chunk
    return err,err2
for hd in (64,128):
    for G in (1,4,7,8):
        for cnt in (64,37,1,16,17):
            print(hd,G,cnt,emu(hd,G,cnt))
