import re, sys
# young collections after the warm-up: from the first probe's time on (the agent's uptime when the log passes 8 s)
for f in sys.argv[1:]:
    ev = [(float(t), float(ms)) for t, ms in re.findall(r"\[([0-9.]+)s\]\[info\]\[gc\] GC\(\d+\) Pause Young .* ([0-9.]+)ms", open(f).read())]
    last = max(t for t, _ in ev)
    st = [(t, ms) for t, ms in ev if t > 8]
    span = last - 8
    p = sorted(ms for _, ms in st)
    print(f"{f}: {len(st)} young after 8 s over {span:.1f} s (one per {span/len(st):.2f} s), pause p50 {p[len(p)//2]:.2f} max {p[-1]:.2f} ms")
