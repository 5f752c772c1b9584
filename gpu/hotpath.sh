#!/usr/bin/env bash
# The probe's hot path on the H200, every figure of issue 23's goals in ONE run (docs/performance.md, "The hot
# path"): the seed-style Python peer (bench/seed_peer.py), the C driver floor (bench/driver_floor.c, before and
# right after the probes; the mean of the two p50s), imexprobe's /probe push between two agents on loopback with
# and without write-back (same GPU, 2 MiB), the HTTP floor (the bench's own, the agents' PeerHttp client), and the
# issue-8 ratio = /probe write-back p50 / (driver floor p50 + HTTP floor p50). p50 and p99 of each.
#   J=$(bash .gpu-bundle/unpack.sh); OUT=/tmp/out J=$J bash gpu/hotpath.sh          # about 1.5 minutes
# COUNT probes after WARMUP (default 500 / 300) for each write-back setting, in 5 rounds. With
# .gpu-bundle/old-classes.tgz (OLD_CLASSES) a second pair of agents from the other build is probed alternately. OLD_CLASSES=/none
# keeps one pair on the GPU, as the judged figures are taken (docs/performance.md, "Session 2026-12-05 f"); CONTROL=1 adds an A/A
# pair beside the A/B (see below). JFR=1 also records both agents
# (1 ms execution sampling; the bundle carries jdk.jfr): the judged figures are then under the profiler, so the
# default is off. TIMELINE=1 records the agents' timeline events instead (dev.imexprobe.trace.Timeline, JFR's
# default settings) and the caller's send and receive times ($OUT/caller-trace.json): python3 gpu/timeline.py $OUT
# gives the wall-clock account of an exchange. Writes $OUT/hotpath.json (every figure), $OUT/hotpath.log, the floors' and agents' files.
# Knobs for finding where the time goes (each run still prints every figure): JVM_FLAGS replaces the agents'
# JVM flags (default: the image's); FLOORS=0 skips the C and HTTP floors; QOS=1 holds /dev/cpu_dma_latency at 0
# for the run (CPUs kept out of deep idle states, as tuned's latency-performance profile does; released at exit);
# every probe is timed by two callers alternately: Python's http.client (parses headers and JSON inside the
# clock, as a script would) and a raw socket (one prebuilt request, the answer read by its Content-Length). A
# connection an agent closed while idle (another pair's turn outlasting its keep-alive timeout) is opened again and
# the probe sent again, timed from there; the log counts these.
# DRIVER=fake runs the agents on the fake driver where no GPU is (from a build tree: target/imexprobe.jar,
# target/native/fake, $JAVA_HOME/bin/java): no Python peer, no floors, no GPU query. The driver's own segments then
# mean nothing, but with TIMELINE=1 every segment outside the driver (Tomcat, JSON, the signature, the hops) is
# measured as on the GPU host, which is how a change there can be measured before a GPU is lent
# (docs/performance.md, "Session 2026-12-05").
# DIRECTION=pull probes pull instead of push (the caller's agent imports; the goals are defined on push, so the
# summary's verdicts then describe pull's figures against them, for comparison only).
# Never calls multicast.
set -u
export DIRECTION=${DIRECTION:-push}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
if [ "${DRIVER:-real}" = fake ]; then
  J=${J:-${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java}
  JAR=${JAR:-target/imexprobe.jar}
  FLOORS=0
  FAKE_WORK=$OUT/fake-driver; rm -rf "$FAKE_WORK"  # the fake's allocations and its channel0, kept with the run
  mkdir -p "$FAKE_WORK/state" "$FAKE_WORK/channels"; : > "$FAKE_WORK/channels/channel0"
  export IMEXPROBE_CUDA_LIBRARY=$PWD/target/native/fake/libcuda.so.1 IMEXPROBE_NVML_LIBRARY=$PWD/target/native/fake/libnvidia-ml.so.1
  export FAKECUDA_GPUS=1 FAKECUDA_STATE_DIR=$FAKE_WORK/state FAKECUDA_CHANNEL_DIR=$FAKE_WORK/channels
  [ -e "$IMEXPROBE_CUDA_LIBRARY" ] || { echo "hotpath: DRIVER=fake needs a build tree (./mvnw -B package)" >&2; exit 2; }
fi
J=${J:-$(bash .gpu-bundle/unpack.sh)}
JAR=${JAR:-.gpu-bundle/imexprobe.jar}
BENCH_JAR=${BENCH_JAR:-$(dirname "$JAR")/imexprobe-bench.jar}
COUNT=${COUNT:-500}; WARMUP=${WARMUP:-300}
export NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1 MALLOC_ARENA_MAX=2 IMEXPROBE_AUTH_TOKEN=hotpath-token-0123456789abcdef
JVM_FLAGS=${JVM_FLAGS:--XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:MaxRAMPercentage=60 -XX:MaxRAM=512m}
FLOORS=${FLOORS:-1}
LOG=$OUT/hotpath.log; : > "$LOG"
say() { echo "$*" | tee -a "$LOG"; }
say "=== $(date -u) gpu/hotpath.sh, $(nproc) CPUs, $(cat .gpu-bundle/COMMIT 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo '?'), JVM_FLAGS=$JVM_FLAGS QOS=${QOS:-0}"
if [ "${QOS:-0}" = 1 ]; then
  python3 -c 'import os,struct,time; f=os.open("/dev/cpu_dma_latency", os.O_WRONLY); os.write(f, struct.pack("i", 0)); time.sleep(3600)' &
  QOS_PID=$!; trap 'kill $QOS_PID 2>/dev/null' EXIT
fi
grep -H . /sys/devices/system/cpu/cpu0/cpuidle/state*/{name,latency} 2>/dev/null | tr '\n' ' ' | tee -a "$LOG"; echo | tee -a "$LOG"
if [ "${DRIVER:-real}" != fake ]; then
nvidia-smi --query-gpu=index,name,driver_version,memory.used --format=csv,noheader 2>&1 | tee -a "$LOG"
MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices)
mkdir -p /dev/nvidia-caps-imex-channels
[ -e /dev/nvidia-caps-imex-channels/channel0 ] || mknod -m 666 /dev/nvidia-caps-imex-channels/channel0 c "$MAJ" 0

say "=== seed-style Python peer"
PYTHONUNBUFFERED=1 timeout 120 python3 bench/seed_peer.py --count "$COUNT" --warmup 50 --json "$OUT/seed.json" 2>&1 | tee -a "$LOG"
fi

if [ "$FLOORS" = 1 ]; then
say "=== C driver floor, before the probes"
bash bench/build-floor.sh "$OUT/driver_floor" 2>&1 | tee -a "$LOG"
timeout 60 "$OUT/driver_floor" --iterations "$COUNT" --warmup 50 --out "$OUT/floor-before.json" 2>&1 | tee -a "$LOG"
# The floor the way the other build (OLD_CLASSES) moves the pattern, for its own ratio, when that differs: OTHER_FLOOR
# is the driver_floor switch (FLOOR_VERIFY=copy: the pattern copied back and compared on the host, as before 138ef47;
# FLOOR_NO_KERNEL=1: no kernels, as before cf5ae34; FLOOR_PAGEABLE=1: no kernel and malloc'd staging, as before
# daa3a87). Unset: both builds are judged against the one floor.
if [ -n "${OTHER_FLOOR:-}" ]; then
say "=== C driver floor the other build's way ($OTHER_FLOOR)"
env "$OTHER_FLOOR" timeout 60 "$OUT/driver_floor" --iterations "$COUNT" --warmup 50 --out "$OUT/floor-other.json" 2>&1 | tee -a "$LOG"
fi
fi

# A before/after in the same run when the bundle carries the other build's classes (OLD_CLASSES, made as
# gpu/peerhttp_ab.sh says): a second pair of agents from those classes, probed alternately with this build's.
OLD_CLASSES=${OLD_CLASSES:-.gpu-bundle/old-classes.tgz}
PAIRS="new:$JAR"
if [ -f "$OLD_CLASSES" ]; then
  python3 gpu/swap_classes.py "$JAR" "$OLD_CLASSES" /tmp/hotpath-old.jar && PAIRS="$PAIRS old:/tmp/hotpath-old.jar"
  # CONTROL=1: an A/A beside the A/B, a third pair of this build with its own classes swapped in as the other
  # build's are. An A/B that cannot tell its builds apart by more than this pair's difference shows no change (a
  # second slot read slower in 13 of 16 A/A settings on one host: docs/performance.md, session 2026-12-06 n).
  if [ "${CONTROL:-0}" = 1 ]; then
    python3 gpu/swap_classes.py "$JAR" "$JAR" /tmp/hotpath-same.jar && PAIRS="$PAIRS same:/tmp/hotpath-same.jar"
  fi
fi
# VARIANTS="tag:NAME=VALUE[,NAME=VALUE] ...": more pairs of this build with settings of their own in the
# environment (e.g. "spin0:IMEXPROBE_DRIVER_SPIN=0"), probed alternately with the others in the same run;
# JVM=FLAGS (a ~ for each space) gives a variant its own JVM flags instead of JVM_FLAGS (e.g. C2 against C1);
# TASKSET=CPUS starts its agents under `taskset -c CPUS` (e.g. "pin4:TASKSET=0-3").
declare -A VARENV
for v in ${VARIANTS:-}; do PAIRS="$PAIRS ${v%%:*}:$JAR"; VARENV[${v%%:*}]=${v#*:}; done
# ORDER=reverse starts the pairs last to first: the pair started first was up to 0.1-0.25 ms faster for reasons of
# its own in some runs (docs/performance.md, session e), so a before/after wants both orders.
[ "${ORDER:-}" = reverse ] && PAIRS=$(echo $PAIRS | tr ' ' '\n' | tac | tr '\n' ' ')
say "=== agents (the image's JVM flags): $PAIRS$([ "${JFR:-0}" = 1 ] && echo ', JFR on each')"
PIDS=""; PORTS=""; port=18081
for pair in $PAIRS; do
  tag=${pair%%:*}; jar=${pair#*:}
  for n in a b; do
    jfr=()
    [ "${JFR:-0}" = 1 ] && jfr=("-XX:StartFlightRecording=filename=$OUT/agent-$tag-$n.jfr,settings=profile,jdk.ExecutionSample#period=1ms,dumponexit=true" -XX:FlightRecorderOptions:stackdepth=256)
    [ "${TIMELINE:-0}" = 1 ] && jfr=("-XX:StartFlightRecording=filename=$OUT/agent-$tag-$n.jfr,settings=default,dumponexit=true")
    extra=(); [ -n "${VARENV[$tag]:-}" ] && IFS=, read -ra extra <<< "${VARENV[$tag]}"
    flags=$JVM_FLAGS; envs=(); pin=()
    for e in "${extra[@]}"; do case "$e" in JVM=*) flags=${e#JVM=}; flags=${flags//\~/ } ;;
      TASKSET=*) pin=(taskset -c "${e#TASKSET=}") ;; *) envs+=("$e") ;; esac; done
    env "${envs[@]}" IMEXPROBE_NODE_NAME=hot-$tag-$n SERVER_PORT=$port IMEXPROBE_MESH_INTERVAL=1h setsid "${pin[@]}" "$J" $flags -Djava.io.tmpdir=/tmp "${jfr[@]}" \
      -jar "$jar" serve > "$OUT/agent-$tag-$n.log" 2>&1 &
    PIDS="$PIDS $!"; PORTS="$PORTS $port"; port=$((port + 1))
  done
done
for p in $PORTS; do
  for i in $(seq 160); do curl -sf localhost:$p/actuator/health/readiness >/dev/null && break; sleep 0.25; done
  # An agent that did not start (a bad OLD_CLASSES, a taken port) would leave every figure after it meaningless.
  curl -sf localhost:$p/actuator/health/readiness >/dev/null || {
    say "agent on :$p not ready after 40 s; its log:"; tail -n 5 "$OUT"/agent-*.log | tee -a "$LOG"; kill $PIDS; exit 1; }
done
PYTHONUNBUFFERED=1 timeout $((200 + WARMUP / 10)) python3 - "$COUNT" "$WARMUP" "$OUT/probe.json" $PAIRS <<'PY' 2>&1 | tee -a "$LOG"
import http.client, json, os, socket, sys, time
count, warmup, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
DIRECTION = os.environ["DIRECTION"]
tags = [p.split(":")[0] for p in sys.argv[4:]]
ROUNDS = 5
def q(s, p): return round(s[min(len(s) - 1, int(round(p * (len(s) - 1))))], 3)
conns = {}
def http_conn(tag):
    i = tags.index(tag)
    c = http.client.HTTPConnection("127.0.0.1", 18081 + 2 * i, timeout=30); c.connect()
    c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1); conns[tag] = (c, 18082 + 2 * i)
for tag in tags: http_conn(tag)
class Closed(Exception):
    """The agent closed a kept-alive connection before answering: it sat idle past Tomcat's keep-alive timeout (60 s)
    while another pair had its turn, which a slow build makes long."""
raws = {}
def raw_conn(tag):
    i = tags.index(tag)
    s = socket.create_connection(("127.0.0.1", 18081 + 2 * i), timeout=30)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1); raws[tag] = s
for tag in tags: raw_conn(tag)
def raw_get(tag, req):
    """One request on a kept-alive socket; the answer read by its Content-Length, parsed after the clock stops.
    Tomcat closes a connection after 100 requests (maxKeepAliveRequests), as http.client sees: reconnect then."""
    s = raws[tag]; s.sendall(req); buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            if not buf: raise Closed()
            raise RuntimeError("connection closed in the middle of an answer")
        buf += chunk
    head, _, body = buf.partition(b"\r\n\r\n")
    lines = [l.lower() for l in head.split(b"\r\n")]
    n = next((int(l.split(b":")[1]) for l in lines if l.startswith(b"content-length:")), None)
    if n is None:  # chunked (a build answering through MVC): read to the last chunk, then join the chunks
        while not body.endswith(b"0\r\n\r\n"):
            body += s.recv(65536)
        out = b""
        while True:
            size, _, rest = body.partition(b"\r\n"); k = int(size, 16)
            if k == 0: break
            out += rest[:k]; body = rest[k + 2:]
        body = out
    while n is not None and len(body) < n:
        body += s.recv(65536)
    if b"connection: close" in lines:
        s.close(); raw_conn(tag)
    return body
trace = [] if os.environ.get("TIMELINE") == "1" else None  # the caller's side of gpu/timeline.py (CLOCK_MONOTONIC)
samples = {(t, wb, k): ([], [], {}, [0]) for t in tags for wb in ("false", "true") for k in ("http.client", "raw")}
reconnects = {t: 0 for t in tags}
def once(tag, kind, path, req):
    t = time.perf_counter(); sent = time.monotonic_ns()
    if kind == "raw":
        body = raw_get(tag, req); ms = (time.perf_counter() - t) * 1000; got = time.monotonic_ns(); r = json.loads(body)
    else:
        c = conns[tag][0]
        c.request("GET", path); r = json.loads(c.getresponse().read()); ms = (time.perf_counter() - t) * 1000
        got = time.monotonic_ns()
    return ms, sent, got, r
def run(tag, wb, n, keep):
    target = conns[tag][1]
    path = f"/probe?target=127.0.0.1:{target}&direction={DIRECTION}&writeback={wb}&sizeBytes=2097152"
    req = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    for i in range(n):
        kind = ("http.client", "raw")[i % 2]
        times, server, stages, fails = samples[(tag, wb, kind)]
        try:
            ms, sent, got, r = once(tag, kind, path, req)
        except (Closed, http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            # closed while idle (Closed says when): once more on a new connection, timed from there
            (raw_conn if kind == "raw" else http_conn)(tag); reconnects[tag] += 1
            ms, sent, got, r = once(tag, kind, path, req)
        if keep and trace is not None:
            trace.append({"pair": tag, "writeback": wb, "caller": kind, "sentNanos": sent, "receivedNanos": got,
                          "verdict": r["verdict"]})
        if keep:
            times.append(ms); server.append(r["durationSeconds"] * 1000); fails[0] += r["verdict"] != "pass"
            for st in r["results"][0]["stages"]:
                stages.setdefault(st["name"], []).append(st["durationSeconds"] * 1000)
for tag in tags:
    for wb in ("false", "true"): run(tag, wb, warmup, False)
for r in range(ROUNDS):  # the pairs alternate, so that both builds see the same machine
    for tag in (tags if r % 2 == 0 else tags[::-1]):
        for wb in ("false", "true"): run(tag, wb, 2 * count // ROUNDS, True)  # each caller gets count
res = {}
for (tag, wb, kind), (times, server, stages, fails) in samples.items():
    s = sorted(times)
    key = ("" if tag == "new" else tag + ":") + "writeback=" + wb + ("" if kind == "http.client" else ":raw")
    res[key] = {"build": tag, "probes": len(s), "failures": fails[0], "p50Ms": q(s, .5), "p90Ms": q(s, .9),
                "p99Ms": q(s, .99), "agentDurationP50Ms": q(sorted(server), .5),
                "stageP50Ms": {k: q(sorted(v), .5) for k, v in stages.items()}}
    print(f"/probe {DIRECTION} writeback={wb} [{tag} build, {kind} caller]: {len(s)} probes, {fails[0]} failed; p50 {q(s, .5)} ms, "
          f"p90 {q(s, .9)} ms, p99 {q(s, .99)} ms; agent's own p50 {q(sorted(server), .5)} ms")
    print("  stage p50 ms:", res[key]["stageP50Ms"])
for tag, k in reconnects.items():
    if k: print(f"the {tag} pair's connections were closed while idle {k} times (a turn of the other pairs outlasted its keep-alive timeout, Tomcat's 60 s by default); each probe was sent again on a new one")
json.dump(res, open(out, "w"), indent=1)
if trace is not None:
    json.dump(trace, open(os.path.join(os.path.dirname(out), "caller-trace.json"), "w"))
PY
set -- $PIDS  # started in the order of PORTS (setsid execs in place: $! is the JVM); ss is not on every host
for p in $PORTS; do
  echo "agent :$p VmRSS $(awk '/^VmRSS/{print $2, $3}' /proc/$1/status 2>/dev/null)" | tee -a "$LOG"; shift
done
kill $PIDS 2>/dev/null
for p in $PIDS; do for i in $(seq 80); do kill -0 $p 2>/dev/null || break; sleep 0.25; done; done  # JFR dumps at exit

if [ "$FLOORS" = 1 ]; then
say "=== C driver floor, right after the probes"
timeout 60 "$OUT/driver_floor" --iterations "$COUNT" --warmup 50 --out "$OUT/floor-after.json" 2>&1 | tee -a "$LOG"

say "=== HTTP floor (the bench's, the agents' own client)"
mkdir -p "$OUT/httpwork"
timeout 90 "$J" --enable-native-access=ALL-UNNAMED -XX:+UseSerialGC -Dloader.path="$BENCH_JAR" \
  -Dloader.main=dev.imexprobe.bench.Bench -cp "$JAR" org.springframework.boot.loader.launch.PropertiesLauncher \
  --jar "$JAR" --java "$J" --work "$OUT/httpwork" --sections http --out "$OUT/httpfloor.json" 2>&1 | tail -4 | tee -a "$LOG"
fi

say "=== summary"
python3 - "$OUT" <<'PY' 2>&1 | tee -a "$LOG"
import json, os, sys
out = sys.argv[1]
DIRECTION = os.environ["DIRECTION"]
def load(n):
    try: return json.load(open(os.path.join(out, n)))
    except Exception as e: return None
seed, probe, fb, fa, http, fp = (load(n) for n in ("seed.json", "probe.json", "floor-before.json", "floor-after.json",
                                                   "httpfloor.json", "floor-other.json"))
rows, res = [], {}
if seed: rows.append(("seed-style Python peer", seed["p50Ms"], seed["p99Ms"])); res["seed"] = seed
if probe:
    for wb in ("false", "true"):
        p = probe.get("writeback=" + wb)
        if p: rows.append((f"/probe {DIRECTION} writeback={wb} ({p['failures']} failed)", p["p50Ms"], p["p99Ms"]))
        r = probe.get("writeback=" + wb + ":raw")
        if r: rows.append((f"  the same, raw-socket caller", r["p50Ms"], r["p99Ms"]))
        for key, o in probe.items():
            tag, _, rest = key.partition(":")
            if rest in ("writeback=" + wb, "writeback=" + wb + ":raw"):
                what = "the other build (OLD_CLASSES)" if tag == "old" else "variant " + tag
                rows.append((f"  {what}, {rest} ({o['failures']} failed)", o["p50Ms"], o["p99Ms"]))
    res["probe"] = probe
floor = None
if fb and fa:
    floor = {k: round((fb["total"][k] + fa["total"][k]) / 2, 3) for k in ("p50", "p99")}
    rows.append((f"C driver floor (before {fb['total']['p50']:.3f}, after {fa['total']['p50']:.3f})", floor["p50"], floor["p99"]))
    res["driverFloor"] = {"mean": floor, "before": fb["total"], "after": fa["total"]}
if fp:
    rows.append(("C driver floor, the other build's way (OTHER_FLOOR)", fp["total"]["p50"], fp["total"]["p99"]))
    res["driverFloorOther"] = fp["total"]
hf = http and http.get("httpFloor")
if hf: rows.append(("HTTP floor", round(hf["p50"], 3), round(hf["p99"], 3))); res["httpFloor"] = hf
for name, p50, p99 in rows: print(f"  {name:<58} p50 {p50:8.3f} ms   p99 {p99:8.3f} ms")
if probe and any(k.startswith("same:") for k in probe):
    res["control"] = {}
    for key in ("writeback=false", "writeback=false:raw", "writeback=true", "writeback=true:raw"):
        new_, old_, same_ = (probe.get(k) for k in (key, "old:" + key, "same:" + key))
        if new_ and old_ and same_:
            ab, aa = old_["p50Ms"] - new_["p50Ms"], same_["p50Ms"] - new_["p50Ms"]
            print(f"  {key:<20} A/B (other build - this) {ab:+.3f} ms, A/A (this build swapped in - this) {aa:+.3f} ms"
                  f" -> {'the A/B is beyond the A/A' if abs(ab) > abs(aa) else 'the A/B is within the A/A: no change shown'}")
            res["control"][key] = {"abMs": round(ab, 3), "aaMs": round(aa, 3)}
if probe and seed and "writeback=false" in probe:
    d = probe["writeback=false"]["p50Ms"] - seed["p50Ms"]
    print(f"  goal 1: /probe wb=false p50 <= Python p50: {probe['writeback=false']['p50Ms']:.3f} vs {seed['p50Ms']:.3f} ms "
          f"-> {'PASS' if d <= 0 else 'MISS by %.3f ms' % d}")
    res["goalPythonPass"] = d <= 0
    if "writeback=false:raw" in probe:
        d = probe["writeback=false:raw"]["p50Ms"] - seed["p50Ms"]
        print(f"  goal 1, raw-socket caller: {probe['writeback=false:raw']['p50Ms']:.3f} vs {seed['p50Ms']:.3f} ms "
              f"-> {'PASS' if d <= 0 else 'MISS by %.3f ms' % d}")
if probe and floor and hf and "writeback=true" in probe:
    ratio = probe["writeback=true"]["p50Ms"] / (floor["p50"] + hf["p50"])
    print(f"  goal 2: ratio = {probe['writeback=true']['p50Ms']:.3f} / ({floor['p50']:.3f} + {hf['p50']:.3f}) = {ratio:.3f}"
          f" (<= 1.5: {'PASS' if ratio <= 1.5 else 'MISS'})")
    res["ratio"] = round(ratio, 3)
    bound = 1.5 * (floor["p50"] + hf["p50"])
    if "writeback=true:raw" in probe:
        raw = probe["writeback=true:raw"]["p50Ms"] / (floor["p50"] + hf["p50"])
        print(f"  goal 2, raw-socket caller: {probe['writeback=true:raw']['p50Ms']:.3f} / ({floor['p50']:.3f} + "
              f"{hf['p50']:.3f}) = {raw:.3f}")
        res["ratioRaw"] = round(raw, 3)
    print(f"  goal 2 needs /probe with write-back p50 <= {bound:.3f} ms (1.5 x the floors; the probe makes two HTTP "
          f"round trips, caller -> exporter -> importer, the floor counts one)")
    res["ratioBoundMs"] = round(bound, 3)
    print("  (both agents and the floor's two processes share one GPU here: the first kernel a process launches after "
          "the other's pays the GPU's context switch, 0.13-0.14 ms on the H200, twice per exchange; agents on "
          "different GPUs do not; docs/performance.md, session 2026-12-05 c)")
    if "old:writeback=true" in probe:
        other = fp["total"]["p50"] if fp else floor["p50"]
        r_old = probe["old:writeback=true"]["p50Ms"] / (other + hf["p50"])
        print(f"  the other build's ratio against its floor: {probe['old:writeback=true']['p50Ms']:.3f} / "
              f"({other:.3f} + {hf['p50']:.3f}) = {r_old:.3f}")
        res["ratioOther"] = round(r_old, 3)
json.dump(res, open(os.path.join(out, "hotpath.json"), "w"), indent=1)
PY
ls -la "$OUT" | tee -a "$LOG"
[ "${DRIVER:-real}" = fake ] && exit 0  # no GPU to ask
say "GPU memory used at the end: $(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1) MiB"
