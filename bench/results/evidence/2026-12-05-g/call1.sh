#!/usr/bin/env bash
# session 2026-12-05 g, call 1 (run from the bundle): where the agents' driver calls lose their time against the
# C floor's. The floor (1000 iterations after 100) four ways, twice, alternately: as its own C processes; with the
# context bound before every call as the shim's use_device does (FLOOR_SET_CURRENT=1); inside a JVM with the agents'
# flags (FloorInJvm, .gpu-bundle/libfloorjvm.so; the importer a fork of it); both. Beside them `check --repeat 1000`
# (the agents' Java stages and JNI natives, one process). Then one pair of agents (gpu/hotpath.sh, OLD_CLASSES=/none).
set -u
W=/tmp/w-g1-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1 MALLOC_ARENA_MAX=2
date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc
echo "tools: $(for t in strace perf ltrace gcc; do command -v $t >/dev/null && echo -n "$t "; done)"
bash bench/build-floor.sh $W/driver_floor || exit 1
JF="-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:MaxRAMPercentage=60 -XX:MaxRAM=512m -XX:-UsePerfData --enable-native-access=ALL-UNNAMED"
floor() { # variant round
  local v=$1 r=$2 bind=0; [[ $v == *bind ]] && bind=1
  local args="--iterations 1000 --warmup 100 --out $W/floor-$v-$r.json"
  if [[ $v == jvm* ]]; then
    FLOOR_SET_CURRENT=$bind timeout 60 $J $JF -cp .gpu-bundle/imexprobe-bench.jar dev.imexprobe.bench.FloorInJvm .gpu-bundle/libfloorjvm.so $args
  else
    FLOOR_SET_CURRENT=$bind timeout 60 $W/driver_floor $args
  fi
  echo "== floor $v $r exit $?"
}
for r in 1 2; do
  if [ $r = 1 ]; then order="c c-bind jvm jvm-bind"; else order="jvm-bind jvm c-bind c"; fi
  for v in $order; do floor $v $r; done
  timeout 90 $J $JF -jar .gpu-bundle/imexprobe.jar check --repeat 1000 --json > $W/check-$r.json 2> $W/check-$r.err; echo "== check $r exit $?"
done
python3 - $W <<'PY'
import json, sys, glob, os
w = sys.argv[1]
keys = ["create", "export", "import", "reserve", "map", "access", "verify", "writeback_write", "release_importer", "writeback_check", "release_exporter"]
print("floor p50 ms:", " ".join(k[:8] for k in keys), "total  cpuExp cpuImp")
for f in sorted(glob.glob(w + "/floor-*.json")):
    d = json.load(open(f)); s = d["stages"]; c = d["cpuMsPerIteration"]
    print(f"{os.path.basename(f):22s}", " ".join(f"{s[k]['p50']:.3f}" for k in keys), f"{d['total']['p50']:.3f}", f"{c['exporter']:.3f} {c['importer']:.3f}")
for f in sorted(glob.glob(w + "/check-*.json")):
    try:
        r = json.load(open(f))["repeat"][0]
        print(os.path.basename(f), r["passed"], "passed", r["failed"], "failed", f"{r['wallSeconds']:.2f} s",
              {k: round(v[0] * 1e3, 3) for k, v in r["stageSecondsP50P99"].items()})
    except Exception as e:
        print(f, "unreadable:", e)
PY
if command -v strace >/dev/null; then # system calls per iteration: the difference between 440 and 220 iterations
  for n in 220 440; do
    FLOOR_SET_CURRENT=0 timeout 60 strace -f -c -o $W/strace-floor-$n.txt $W/driver_floor --iterations $n --warmup 0 --out $W/strace-floor-$n.json; echo "== strace floor $n exit $?"
    timeout 90 strace -f -c -o $W/strace-check-$n.txt $J $JF -jar .gpu-bundle/imexprobe.jar check --repeat $n --json > $W/strace-check-$n.json 2>&1; echo "== strace check $n exit $?"
  done
  python3 - $W <<'PY'
import sys, re
w = sys.argv[1]
def calls(f):
    out = {}
    for line in open(f):
        p = line.split()
        if len(p) >= 5 and p[0][0].isdigit() and p[-1] != "total":
            out[p[-1]] = int(p[3])
    return out
for what in ("floor", "check"):
    a, b = calls(f"{w}/strace-{what}-220.txt"), calls(f"{w}/strace-{what}-440.txt")
    per = {k: round((b.get(k, 0) - a.get(k, 0)) / 220, 2) for k in set(a) | set(b)}
    print(what, "system calls per iteration:", {k: v for k, v in sorted(per.items(), key=lambda kv: -kv[1]) if abs(v) >= 0.05})
PY
fi
OUT=$W/lone COUNT=1000 FLOORS=1 OLD_CLASSES=/none timeout 150 bash gpu/hotpath.sh > $W/lone.out 2>&1; echo "== lone exit $?"
sed -n '/=== summary/,/the other build.s ratio/p' $W/lone/hotpath.log
grep -E "stage p50" $W/lone/hotpath.log | sed -n '2p;4p'
date -u; nvidia-smi --query-gpu=memory.used --format=csv,noheader
find $W -name driver_floor -delete
tar -C $W -czf $OUT/all.tgz --exclude='*.jar' . ; ls -la $OUT
