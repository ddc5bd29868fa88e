#!/usr/bin/env python3
"""Where one INSERT's time goes in the server, from a Go execution trace.

Usage, with the server started with --http 127.0.0.1:8080 and a single
connection inserting one message at a time (e.g. every 2 ms):

    curl -s -o trace.out 'http://127.0.0.1:8080/debug/pprof/trace?seconds=2'
    go tool trace -d=parsed trace.out > trace.txt
    python3 docs/performance/insert-path.py trace.txt

It prints the scheduling latency (runnable -> running) of the goroutines on
the embedded store's commit path (the connection's, the committer, Pebble's
WAL flusher, the syncer), their system calls, and one INSERT's path cut into
segments: request read -> handed to the committer -> fdatasync starts ->
fdatasync ends -> session woken -> reply written. It assumes one connection.
"""
import re,sys,collections
evs=[]
cur=None
for line in open(sys.argv[1]):
    if line.startswith("M="):
        m=re.match(r"M=(-?\d+) P=(-?\d+) G=(-?\d+) (\w+) Time=(\d+)(.*)",line)
        if not m: continue
        cur={'M':int(m[1]),'P':int(m[2]),'G':int(m[3]),'kind':m[4],'t':int(m[5]),'rest':m[6],'stack':[]}
        evs.append(cur)
    elif line.startswith("\t") and cur is not None and not line.startswith("\t\t"):
        cur['stack'].append(line.strip().split(" @")[0])
# goroutine roles by first stack seen
role={}
def classify(st):
    s=" ".join(st)
    if "conn).loop" in s or "wire.(*conn)" in s: return "conn"
    if "PebbleStore).committer" in s: return "committer"
    if "PebbleStore).syncer" in s: return "syncer"
    if "flushLoop" in s: return "flush"
    return None
trans=[]
for e in evs:
    if e['kind']!="StateTransition": continue
    m=re.search(r"GoID=(\d+) (\w+)->(\w+)",e['rest'])
    if not m: continue
    gid=int(m[1]); fr,to=m[2],m[3]
    c=classify(e['stack'])
    if c and gid==e['G'] : role.setdefault(gid,c)
    if c and gid not in role and fr=="Running": role[gid]=c
    trans.append((e['t'],gid,fr,to,e['G'],e['stack']))
for t,gid,fr,to,g,st in trans:
    if gid not in role:
        c=classify(st)
        if c and g==gid: role[gid]=c
print(collections.Counter(role.values()))
# scheduling latency per role: Runnable->Running delay
lastRunnable={}
lat=collections.defaultdict(list)
sysc=collections.defaultdict(list)
inSys={}
for t,gid,fr,to,g,st in trans:
    r=role.get(gid)
    if to=="Runnable": lastRunnable[gid]=t
    if fr=="Runnable" and to=="Running" and gid in lastRunnable and r:
        lat[r].append(t-lastRunnable.pop(gid))
    if to=="Syscall": inSys[gid]=(t," ".join(st))
    if fr=="Syscall" and gid in inSys and r:
        t0,s=inSys.pop(gid)
        key=r+(" fdatasync" if "Fdatasync" in s or "SyncData" in s else " write" if "Write" in s else " read" if "Read" in s else " other")
        sysc[key].append(t-t0)
def pct(xs,p): xs=sorted(xs); return xs[int(p*(len(xs)-1))]/1000 if xs else 0
for r,xs in sorted(lat.items()): print("sched-latency %-10s n=%5d p50=%7.1fus p90=%7.1fus mean=%7.1fus"%(r,len(xs),pct(xs,.5),pct(xs,.9),sum(xs)/len(xs)/1000))
for r,xs in sorted(sysc.items()): print("syscall %-22s n=%5d p50=%7.1fus p90=%7.1fus mean=%7.1fus"%(r,len(xs),pct(xs,.5),pct(xs,.9),sum(xs)/len(xs)/1000))
# per-request segments
seg=collections.defaultdict(list)
state=None; marks={}
for t,gid,fr,to,g,st in trans:
    r=role.get(gid)
    s=" ".join(st)
    if r=="conn" and fr=="Waiting" and to=="Runnable" and state is None:
        marks={'A':t}; state='A'
    elif state=='A' and r=="conn" and fr=="Running" and to=="Waiting" and "submit" in s:
        marks['B']=t; state='B'
    elif state=='B' and r=="flush" and to=="Syscall" and ("SyncData" in s or "Fdatasync" in s):
        marks['E']=t; state='E'
    elif state=='E' and r=="flush" and fr=="Syscall":
        marks['F']=t; state='F'
    elif state=='F' and r=="conn" and fr=="Waiting" and to=="Runnable":
        marks['H']=t; state='H'
    elif state=='H' and r=="conn" and to=="Syscall" and "Write" in s:
        marks['I']=t; state='I'
    elif state=='I' and r=="conn" and fr=="Syscall":
        marks['J']=t
        for a,b in [('A','B'),('B','E'),('E','F'),('F','H'),('H','I'),('I','J'),('A','J')]:
            seg[a+'->'+b].append(marks[b]-marks[a])
        state=None
    elif r=="conn" and fr=="Waiting" and to=="Runnable" and state in ('A',):
        pass
names={'A->B':'request arrives -> submitted to committer (parse/plan/stage)','B->E':'submitted -> fdatasync starts','E->F':'fdatasync','F->H':'fdatasync done -> session woken','H->I':'session woken -> reply write','I->J':'reply write syscall','A->J':'total in server'}
for k in ['A->B','B->E','E->F','F->H','H->I','I->J','A->J']:
    xs=seg[k]; print("%-60s n=%4d p50=%7.1fus mean=%7.1fus"%(names[k],len(xs),pct(xs,.5),sum(xs)/max(len(xs),1)/1000))
