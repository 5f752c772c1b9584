#!/usr/bin/env bash
# The benchmark on the H200 (docs/performance.md, section "H200"), in one lease and under 6 minutes:
#   - probe latency: a full push probe between two agents on loopback against the floor measured in the same run
#     (bench/driver_floor.c: the same driver sequence in C, two processes; plus one loopback HTTP round trip),
#   - copy bandwidth through an imported FABRIC mapping against a plain device-to-device copy on the same GPU
#     (256 MiB and 1 GiB),
#   - the scale run: one agent probing 71 simulated peers and probed by them, 30 s interval (1 round of warm-up,
#     3 measured), then the interval compressed to 3 s,
#   - where a probe's time goes (micro-measurements in one JVM).
# From the repository root on the GPU host (no JDK there: the bundle of `gpu/bundle.sh`):
#   J=$(bash .gpu-bundle/unpack.sh); OUT=/tmp/out J=$J bash gpu/bench.sh
# Writes $OUT/bench-h200.json (every figure), $OUT/bench-h200.log (the table and progress), $OUT/check.json (the
# node as the agent sees it) and $OUT/bench-work/ (agent and worker logs, the driver floor's own JSON).
# COMPARE_AGENT_JVM="FLAGS" adds a second pair of agents with those JVM flags, probed alternately with the first
# (bench/run.sh --compare-agent-jvm). Never calls cuMulticastCreate; NCCL_NVLS_ENABLE=0 all the same. Stops only the processes it started.
# To try it on a machine without a GPU, point IMEXPROBE_CUDA_LIBRARY/IMEXPROBE_NVML_LIBRARY and the FAKECUDA_*
# variables at the fake driver (target/native/fake): the bench then runs on it as given (COPY_SIZES=16M,64M: the
# fake copies large buffers slowly).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
J=${J:-$(bash .gpu-bundle/unpack.sh)}
JAR=${JAR:-.gpu-bundle/imexprobe.jar}
export NCCL_NVLS_ENABLE=0
LOG=$OUT/bench-h200.log
: > "$LOG"
say() { echo "$*" | tee -a "$LOG"; }

say "=== $(date -u) gpu/bench.sh on $(cat /proc/sys/kernel/hostname), $(nproc) CPUs: $(awk -F': ' '/^model name/{print $2; exit}' /proc/cpuinfo)"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1 | tee -a "$LOG"
fi
# IMEX channel 0, as gpu/final.sh creates it: FABRIC exports fail with 800 without one.
MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices)
if [ -n "$MAJ" ]; then
  mkdir -p /dev/nvidia-caps-imex-channels
  [ -e /dev/nvidia-caps-imex-channels/channel0 ] || mknod -m 666 /dev/nvidia-caps-imex-channels/channel0 c "$MAJ" 0
  say "IMEX channels: $(ls /dev/nvidia-caps-imex-channels | tr '\n' ' ')"
fi
# The real driver unless the caller points at another library (the fake, for a dry run).
if [ -n "${IMEXPROBE_CUDA_LIBRARY:-}" ]; then driver=given; else driver=real; fi
say "driver: $driver; java: $J; jar: $JAR"

# The node as the agent sees it (the check's exit code only says whether there are error findings).
timeout 60 "$J" -jar "$JAR" check --json > "$OUT/check.json" 2> "$OUT/check.err"
say "check exit $? ($(wc -c < "$OUT/check.json") bytes in check.json)"

# The bench itself, bounded well inside the lease: 330 s (timeout signals the whole process group, and the
# bench stops its agents on SIGTERM). Figures are written after each section, so a run cut short keeps them.
start=$(date +%s)
compare=()
[ -n "${COMPARE_AGENT_JVM:-}" ] && compare=(--compare-agent-jvm "$COMPARE_AGENT_JVM")
timeout -k 15 330 bash bench/run.sh --driver "$driver" --java "$J" --jar "$JAR" --keep --scale-rounds 1,3 \
  --copy-sizes "${COPY_SIZES:-256M,1G}" --out "$OUT/bench-h200.json" "${compare[@]}" 2>&1 | tee -a "$LOG"
rc=${PIPESTATUS[0]}
say "=== bench/run.sh exit $rc after $(( $(date +%s) - start )) s"

# The work folder's logs (agents, copy worker, driver floor), each cut to its last 2 MiB.
work=$(sed -n 's/^bench: work folder (logs) kept: //p' "$LOG" | tail -1)
if [ -n "$work" ] && [ -d "$work" ]; then
  mkdir -p "$OUT/bench-work"
  for f in "$work"/*.log "$work"/*.json; do
    [ -f "$f" ] && tail -c 2097152 "$f" > "$OUT/bench-work/$(basename "$f")"
  done
  rm -rf "$work"
fi
exit "$rc"
