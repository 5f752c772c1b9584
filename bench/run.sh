#!/usr/bin/env bash
# imexprobe benchmark harness (docs/performance.md): probe latency against the driver and HTTP floors, where a
# probe's time goes, copy bandwidth through an imported mapping, one agent of a 72-GPU domain. Prints ONE table
# (metric, value, goal, verdict) and writes every figure as JSON. Never fails on a missed goal; exits non-zero only
# when it could not measure.
#
#   bash bench/run.sh [--quick] [--out FILE] [--java PATH] [--jar PATH] [--driver auto|fake|real] [--keep]
#
#   --quick    a smoke run (CI: BenchQuickIT), within a minute on the fake driver; numbers are not for judging
#   --out      the figures file (default bench/results/<hostname>-<date>.json, git-ignored)
#   --java     the Java 25 runtime (default $JAVA_HOME/bin/java, else java on the PATH); a JRE is enough
#   --jar      the agent's jar (default target/imexprobe.jar)
#   --bench-jar the benchmark's own jar (default imexprobe-bench.jar beside --jar), run on the agent's jar's
#              class path: the product jar holds no benchmark class
#   --driver   auto (default): the real libcuda.so.1 when the dynamic linker or a usual driver folder has it, else
#              the fake driver (target/native/fake, or the copy inside the jar)
#   --keep     keep the work folder (agent logs, the driver floor's JSON) and print where it is
#   --sections http,micro,probe,cost,copy,scale,domains (default: all but domains; domains: one agent of a
#              72-GPU domain alone, then inside 8 domains of 72 (576 GPUs); cost: GPU memory and CPU of an idle agent
#              and of one in rounds, per GPU)   --copy-sizes 256M,1G
#   --copy-gpus E,I  the copy section's exporter and importer GPUs (CUDA ordinals; default 0,0). Across two GPUs
#              the reference is a peer copy in one process (two contexts), not a local copy
#   --scale-rounds W,M   the 30 s scale run: W mesh rounds of warm-up, M intervals measured (default 6,1: past
#              the JIT's warm-up; until 2026-12-06 m it was 2,4, whose window still held compiling)
#   --compare-jar OTHER.jar [--compare-hops N] [--compare-agent-jvm "FLAGS"]   before/after: a second pair of
#              agents from another build (or with other JVM flags), probed alternately with this build's pair
#              (N: the other build's driver-pool hops per probe, for its breakdown)
#   --agent-jvm "FLAGS"   the agents' JVM flags instead of the chart's (see below); --agent-env "K=V …" extra
#              environment for the agents (e.g. SPRING_MAIN_LAZYINITIALIZATION=true)
#   --aot | --no-aot   agents start as in the image, from the extracted jar and the AOT cache that
#              src/main/docker/aot-cache.sh trains with the agents' flags (default), or from the fat jar
#              (the default of --quick, which skips the ~10 s training)
#   --print-agent-jvm   print the agents' JVM flags (without the AOT cache's) and exit
#
# On the GPU host (no Maven, no JDK; the bundle of `gpu/bundle.sh`, gcc, python3):
#   OUT=/tmp/out bash gpu/bench.sh   (it calls this script with the bundle's runtime and jar)
# It creates IMEX channel0 there if it is missing (as root, the mknod of gpu/validate-foundation.sh).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
quick=0; out=""; java=""; jar=""; bench_jar=""; driver=auto; keep=0; sections=""; copy_sizes=""; copy_gpus=""; scale_rounds=""; compare=(); agent_jvm_given=""; agent_env=""; aot=""; print_agent_jvm=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --out) out=$2; shift ;;
    --java) java=$2; shift ;;
    --jar) jar=$2; shift ;;
    --bench-jar) bench_jar=$2; shift ;;
    --driver) driver=$2; shift ;;
    --keep) keep=1 ;;
    --sections) sections=$2; shift ;;
    --copy-sizes) copy_sizes=$2; shift ;;
    --copy-gpus) copy_gpus=$2; shift ;;
    --scale-rounds) scale_rounds=$2; shift ;;
    --compare-jar) compare+=(--compare-jar "$2"); shift ;;
    --compare-hops) compare+=(--compare-hops "$2"); shift ;;
    --compare-agent-jvm) compare+=(--compare-agent-jvm "$2"); shift ;;
    --agent-jvm) agent_jvm_given=$2; shift ;;
    --agent-env) agent_env=$2; shift ;;
    --aot) aot=1 ;;
    --no-aot) aot=0 ;;
    --print-agent-jvm) print_agent_jvm=1 ;;
    -h|--help) sed -n '2,33p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench: unknown option '$1' (--help)" >&2; exit 64 ;;
  esac
  shift
done

# ---- agents run as in the chart's pod: the image's JAVA_TOOL_OPTIONS (the Dockerfile's ENV: SerialGC, C1 only)
# with the chart's agent.javaToolOptions appended when set (as templates/_pod.tpl renders it), its 512Mi memory
# limit (MaxRAM gives the JVM the container's view of memory: the heap is 60% of 512 MiB), the Dockerfile's
# entrypoint flag, and its MALLOC_ARENA_MAX and CUDA_DEVICE_MAX_CONNECTIONS. No fallback: without the image's flags
# the JVM picks G1 and C2 by itself, which cost the scale agent 40-120 MiB of RSS unnoticed (docs/performance.md).
if [ -n "$agent_jvm_given" ]; then
  agent_jvm=$agent_jvm_given
else
  image_opts=$(sed -n 's/^ENV JAVA_TOOL_OPTIONS="\([^"]*\)".*/\1/p' "$root/Dockerfile" 2>/dev/null | head -1)
  [ -n "$image_opts" ] || { echo "bench: no ENV JAVA_TOOL_OPTIONS=\"…\" in $root/Dockerfile: the agents' JVM flags are unknown (pass --agent-jvm)" >&2; exit 2; }
  tool_opts=$(sed -n 's/^ *javaToolOptions: *"\(.*\)"/\1/p' "$root/helm/imexprobe/values.yaml" 2>/dev/null | head -1)
  agent_jvm="$image_opts${tool_opts:+ $tool_opts} -XX:MaxRAM=512m -XX:+ExitOnOutOfMemoryError"
fi
if [ "$print_agent_jvm" = 1 ]; then echo "$agent_jvm"; exit 0; fi

if [ -z "$java" ]; then
  if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then java=$JAVA_HOME/bin/java; else java=$(command -v java || true); fi
fi
[ -n "$java" ] && [ -x "$java" ] || { echo "bench: no java (pass --java or set JAVA_HOME)" >&2; exit 2; }
spec=$("$java" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/{print $2}')
[ "${spec%%.*}" -ge 25 ] 2>/dev/null || { echo "bench: $java is Java $spec; the agent needs 25 (set JAVA_HOME)" >&2; exit 2; }
jar=${jar:-$root/target/imexprobe.jar}
[ -f "$jar" ] || { echo "bench: no $jar (build it: ./mvnw -B package -DskipTests)" >&2; exit 2; }
jar=$(cd "$(dirname "$jar")" && pwd)/$(basename "$jar")
bench_jar=${bench_jar:-$(dirname "$jar")/imexprobe-bench.jar}
[ -f "$bench_jar" ] || { echo "bench: no $bench_jar, the benchmark's jar (build it: ./mvnw -B package -DskipTests; on a GPU host bash gpu/bundle.sh packs it)" >&2; exit 2; }
bench_jar=$(cd "$(dirname "$bench_jar")" && pwd)/$(basename "$bench_jar")
command -v gcc >/dev/null || { echo "bench: gcc is needed to build the driver floor (bench/driver_floor.c)" >&2; exit 2; }
out=${out:-$here/results/$(hostname)-$(date +%Y%m%d-%H%M%S).json}
mkdir -p "$(dirname "$out")"

work=$(mktemp -d "${TMPDIR:-/tmp}/imexprobe-bench.XXXXXX")
finish() {
  rc=$?
  if [ "$keep" = 1 ] || [ "$rc" != 0 ]; then echo "bench: work folder (logs) kept: $work" >&2; else rm -rf "$work"; fi
}
trap finish EXIT

# ---- which driver --------------------------------------------------------------------------------------------
have_real_libcuda() {
  ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 ' && return 0
  for d in /usr/local/nvidia/lib64 /usr/lib64 /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /run/nvidia/driver/usr/lib64; do
    [ -e "$d/libcuda.so.1" ] && return 0
  done
  return 1
}
if [ "$driver" = auto ]; then
  if [ -n "${IMEXPROBE_CUDA_LIBRARY:-}" ]; then driver=given; elif have_real_libcuda; then driver=real; else driver=fake; fi
fi
case "$driver" in
  fake)
    fake=$root/target/native/fake
    if [ ! -e "$fake/libcuda.so.1" ]; then  # a jar without its build tree: use the fake it carries
      fake=$work/fake; mkdir -p "$fake"
      python3 - "$jar" "$fake" <<'PY'
import sys, zipfile, platform, os
arch = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}[platform.machine()]
with zipfile.ZipFile(sys.argv[1]) as z:
    for lib in ("libcuda.so.1", "libnvidia-ml.so.1"):
        with open(os.path.join(sys.argv[2], lib), "wb") as f:
            f.write(z.read(f"BOOT-INF/classes/native/linux-{arch}/fake/{lib}"))
PY
    fi
    mkdir -p "$work/state" "$work/channels" && : > "$work/channels/channel0"
    export IMEXPROBE_CUDA_LIBRARY=$fake/libcuda.so.1 IMEXPROBE_NVML_LIBRARY=$fake/libnvidia-ml.so.1
    # One GPU, or as many as --copy-gpus names.
    fake_gpus=1; for g in ${copy_gpus//,/ }; do [ "$g" -ge "$fake_gpus" ] 2>/dev/null && fake_gpus=$((g + 1)); done
    export FAKECUDA_GPUS=$fake_gpus FAKECUDA_STATE_DIR=$work/state FAKECUDA_CHANNEL_DIR=$work/channels
    unset FAKECUDA_FAULTS FAKECUDA_DEV_DIR CUDA_VISIBLE_DEVICES
    ;;
  real)
    unset IMEXPROBE_CUDA_LIBRARY IMEXPROBE_NVML_LIBRARY
    export NCCL_NVLS_ENABLE=0
    D=/dev/nvidia-caps-imex-channels
    if [ ! -e "$D/channel0" ]; then
      MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices)
      if [ -n "$MAJ" ] && [ "$(id -u)" = 0 ]; then
        mkdir -p "$D" && mknod -m 666 "$D/channel0" c "$MAJ" 0 && echo "bench: created $D/channel0 (char $MAJ:0)" >&2
      fi
    fi
    [ -e "$D/channel0" ] || { echo "bench: $D/channel0 is missing and could not be created (needs root): FABRIC exports fail with 800 without it" >&2; exit 2; }
    ;;
  given) ;;  # IMEXPROBE_CUDA_LIBRARY and the FAKECUDA_* switches as the caller set them
  *) echo "bench: --driver must be auto, fake or real" >&2; exit 64 ;;
esac

# ---- the driver floor: C, the shim's own loader, built here with gcc (never by Maven) ----------------------------
bash "$here/build-floor.sh" "$work/driver_floor"
# Half of the floor runs now, half right after the probes (Bench runs the same binary again), so that the two
# bracket the probe measurement on a machine whose speed drifts; the ratio uses their mean.
if [ "$quick" = 1 ]; then floor_args="--iterations 100 --warmup 10"; else floor_args="--iterations 500 --warmup 50"; fi
echo "bench: driver floor, before the probes ($floor_args)" >&2
floor_pid=""
if [ "$quick" = 1 ]; then
  # --quick: while the JVMs start (its numbers are not judged); Bench waits for floor.json or floor.failed.
  ( "$work/driver_floor" $floor_args --out "$work/floor.json.part" && mv "$work/floor.json.part" "$work/floor.json" \
      || : > "$work/floor.failed" ) &
  floor_pid=$!
else
  "$work/driver_floor" $floor_args --out "$work/floor.json"
fi

image_env=$(grep -oE '(MALLOC_ARENA_MAX|CUDA_DEVICE_MAX_CONNECTIONS)=[0-9]+' "$root/Dockerfile" 2>/dev/null | tr '\n' ' ' || true)
image_env=${image_env% }
agent_env="${image_env}${agent_env:+ $agent_env}"

# ---- the image's start layout: the jar extracted and an AOT cache trained with the agents' own flags -----------
agent_jar=$jar
if [ "${aot:-$((1 - quick))}" = 1 ]; then
  echo "bench: the image's start layout: extracting the jar and training the AOT cache (src/main/docker/aot-cache.sh)" >&2
  JAVA=$java JAVA_TOOL_OPTIONS="$agent_jvm" sh "$root/src/main/docker/aot-cache.sh" "$jar" "$work/app" 2>&1 \
    | { grep -v '^Picked up JAVA_TOOL_OPTIONS' || true; } >&2
  agent_jar=$work/app/imexprobe.jar
  agent_jvm="$agent_jvm -XX:AOTCache=$work/app/imexprobe.aot"
fi

echo "bench: the agents' JVM flags: $agent_jvm" >&2
args=(--jar "$agent_jar" --java "$java" --work "$work" --driver-floor "$work/floor.json" --driver-floor-command
  "$work/driver_floor $floor_args" --out "$out" --agent-jvm "$agent_jvm")
[ "$quick" = 1 ] && args+=(--quick)
[ -n "$sections" ] && args+=(--sections "$sections")
[ -n "$copy_sizes" ] && args+=(--copy-sizes "$copy_sizes")
[ -n "$copy_gpus" ] && args+=(--copy-gpus "$copy_gpus")
[ -n "$scale_rounds" ] && args+=(--scale-rounds "$scale_rounds")
[ ${#compare[@]} -gt 0 ] && args+=("${compare[@]}")
[ -n "$agent_env" ] && args+=(--agent-env "$agent_env")
"$java" --enable-native-access=ALL-UNNAMED -XX:+UseSerialGC -Dloader.path="$bench_jar" \
  -Dloader.main=dev.imexprobe.bench.Bench -cp "$jar" \
  org.springframework.boot.loader.launch.PropertiesLauncher "${args[@]}"
[ -z "$floor_pid" ] || wait "$floor_pid"
