import json,sys,collections
dec=json.JSONDecoder()
data=open('/tmp/watch.json').read()
i=0;evs=[]
while i<len(data):
    while i<len(data) and data[i].isspace(): i+=1
    if i>=len(data): break
    o,i=dec.raw_decode(data,i); evs.append(o)
last={}
seq=collections.defaultdict(list)
for e in evs:
    o=e['object']; k=o['metadata']['namespace']+'/'+o['metadata']['name']
    if o['spec'].get('replicas')!=2: last[k]=o.get('status'); continue
    st=o.get('status')
    if k in last and last[k]==st: continue
    prev=last.get(k); last[k]=st
    if prev is None: continue
    diff=[]
    for f in sorted(set(st)|set(prev)):
        if f=='conditions':
            pc={c['type']:c for c in prev.get('conditions',[])}
            for c in st.get('conditions',[]):
                p=pc.get(c['type'],{})
                for x in ('status','reason','message'):
                    if p.get(x)!=c.get(x): diff.append(f"{c['type']}.{x}: {p.get(x)!r} -> {c.get(x)!r}")
        elif prev.get(f)!=st.get(f):
            diff.append(f"{f}: {str(prev.get(f))[:80]} -> {str(st.get(f))[:80]}")
    seq[k].append(diff)
n=len(seq); tot=sum(len(v) for v in seq.values())
print("mysqls changed",n,"status writes",tot, tot/max(n,1))
hist=collections.Counter(len(v) for v in seq.values()); print(hist)
# examples with >2
shown=0
for k,v in seq.items():
    if len(v)>2 and shown<4:
        shown+=1; print("==",k)
        for d in v: print("  --"); [print("    ",x[:300]) for x in d]
def kind(d):
    s=" ".join(d)
    if "observedGeneration" in s: return "ack"
    if ".reason" in s: return "reason"
    if "claim" in s and "message" in s: return "claim-msg"
    if ".message" in s: return "msg"
    return "details:"+",".join(sorted(set(x.split(':')[0] for x in d)))
pat=collections.Counter(tuple(kind(d) for d in v) for v in seq.values())
for p,c in pat.most_common(12): print(c,p)
done=set()
for k,v in seq.items():
    p=tuple(kind(d) for d in v)
    if p in done or p not in (('ack', 'claim-msg', 'claim-msg', 'reason'),('ack', 'claim-msg', 'reason', 'reason', 'reason')): continue
    done.add(p); print("==",k,p)
    for d in v[1:]:
        print("  --"); [print("    ",x[:260]) for x in d if not x.startswith("instances") and not x.startswith("Ready.")]
