import json,collections
dec=json.JSONDecoder(); data=open('/tmp/watch.json').read(); i=0
stalled=collections.defaultdict(set)
while i<len(data):
    while i<len(data) and data[i].isspace(): i+=1
    if i>=len(data): break
    e,i=dec.raw_decode(data,i); o=e['object']
    for c in (o.get('status') or {}).get('conditions',[]):
        if c['type']=='Stalled' and c['status']=='True':
            stalled[(o['spec'].get('replicas'), c['reason'], c['message'].split(': ',1)[-1][:70])].add(o['metadata']['name'])
for k,v in sorted(stalled.items()): print(len(v), k)
