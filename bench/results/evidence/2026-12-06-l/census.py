#!/usr/bin/env python3
"""Thread census of every `java ... -jar ... serve` process on this host, every 10 ms, until none is left (or
--seconds). For each process: CPU of the whole process over the census, CPU of the threads that lived through it,
and CPU of the threads born and/or ended during it, by name (digits as #). Says where the scale run's "(the rest)"
(threads ended inside the window) goes. Session 2026-12-06 l, call 2."""
import json, os, re, sys, time
TCK = os.sysconf('SC_CLK_TCK')
def cpu(stat):
    f = stat[stat.rindex(')') + 2:].split()
    return (int(f[11]) + int(f[12])) / TCK
def agents():
    out = []
    for p in os.listdir('/proc'):
        if not p.isdigit(): continue
        try: c = open('/proc/%s/cmdline' % p, 'rb').read().split(b'\0')
        except OSError: continue
        if c and c[0].endswith(b'java') and b'serve' in c and b'-jar' in c: out.append(int(p))
    return out
procs = {}   # pid -> {start, end, cpu0, cpu1, threads: tid -> [name, first_t, last_t, cpu_first, cpu_last]}
t_end = time.time() + float(sys.argv[2] if len(sys.argv) > 2 else 900)
seen_any = False
while time.time() < t_end:
    now = time.time()
    pids = agents()
    if pids: seen_any = True
    elif seen_any and all('end' in v for v in procs.values()):
        # wait a little for the next agent of the run
        if now - max(v['end'] for v in procs.values()) > 20: break
    for pid in pids:
        try: pstat = open('/proc/%d/stat' % pid).read()
        except OSError: continue
        d = procs.setdefault(pid, {'start': now, 'cpu0': cpu(pstat), 'threads': {}, 'cmd': open('/proc/%d/cmdline' % pid).read().replace('\0', ' ')[:300]})
        d['cpu1'] = cpu(pstat); d['last'] = now
        try: tids = os.listdir('/proc/%d/task' % pid)
        except OSError: continue
        for t in tids:
            try: s = open('/proc/%d/task/%s/stat' % (pid, t)).read()
            except OSError: continue
            name = s[s.index('(') + 1:s.rindex(')')]
            c = cpu(s)
            th = d['threads'].get(t)
            if th is None: d['threads'][t] = [name, now, now, c, c]
            else: th[0] = name; th[2] = now; th[4] = c
    for pid, d in procs.items():
        if pid not in pids and 'end' not in d: d['end'] = d.get('last', now)
    time.sleep(0.01)
res = []
for pid, d in procs.items():
    start, last = d['start'], d.get('last', d['start'])
    lived, born, ended, atexit = {}, {}, {}, {}
    for tid, (name, f, l, c0, c1) in d['threads'].items():
        key = re.sub(r'\d+', '#', name)
        b = f > start + 0.05; e = l < last - 0.05
        # threads that end in the last 3 s end with the process (the bench stops it), not in the run
        bucket = (ended if l < last - 3 else atexit) if e else (born if b else lived)
        # a thread first seen after the census began counts from 0 (its whole life), else from its first reading
        bucket[key] = bucket.get(key, 0) + (c1 if b else c1 - c0)
    top = lambda m: dict(sorted(((k, round(v, 3)) for k, v in m.items() if v > 0), key=lambda kv: -kv[1])[:12])
    res.append({'pid': pid, 'cmd': d['cmd'], 'seconds': round(last - start, 2), 'processCpu': round(d['cpu1'] - d['cpu0'], 3),
                'livedThrough': top(lived), 'bornAndAlive': top(born), 'ended': top(ended), 'endedAtExit': top(atexit),
                'endedCount': sum(1 for v in d['threads'].values() if v[2] < last - 3),
                'endedNames': sorted({re.sub(r'\d+', '#', v[0]) for v in d['threads'].values() if v[2] < last - 3}),
                'endedCounts': {k: sum(1 for v in d['threads'].values() if v[2] < last - 3 and re.sub(r'\d+', '#', v[0]) == k)
                                for k in {re.sub(r'\d+', '#', v[0]) for v in d['threads'].values() if v[2] < last - 3}}})
json.dump(res, open(sys.argv[1], 'w'), indent=1)
for r in res:
    print('pid %d %.1fs cpu %.2fs  lived %.2f  born %.2f  ended %.2f (%d threads: %s)' % (r['pid'], r['seconds'], r['processCpu'],
          sum(r['livedThrough'].values()), sum(r['bornAndAlive'].values()), sum(r['ended'].values()), r['endedCount'], json.dumps(r['endedCounts'])[:300]))
    print('   ended by name:', r['ended'], ' at exit:', round(sum(r['endedAtExit'].values()), 2))
