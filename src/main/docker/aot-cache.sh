#!/bin/sh
# aot-cache.sh JAR DIR [JVM_FLAG ...]
#
# Lays the agent out for a quick start: extracts the Boot jar JAR into DIR (DIR/imexprobe.jar plus DIR/lib/) and
# writes DIR/imexprobe.aot, the JDK's AOT cache (JEP 483: classes read, parsed, loaded and linked ahead of time),
# recorded from one training start of `serve` that exits as soon as its Spring context is refreshed. Then:
#
#   java -XX:AOTCache=DIR/imexprobe.aot -jar DIR/imexprobe.jar serve
#
# docs/performance.md has what it saves (start to ready and resident memory). The cache holds only for the same
# JDK build, the same class path (DIR must stay where it is) and the same GC and compressed-oops mode, so train
# with the JVM and the JVM flags of production: the image's JAVA_TOOL_OPTIONS apply here as they do at run time,
# and JVM_FLAG ... are added. The training heap is pinned to a pod-sized 512 MiB of "RAM" (-XX:MaxRAM), because a
# builder with more than ~50 GiB would otherwise train without compressed oops and no pod could use the cache.
# Where a cache does not fit, the JVM says so in one warning and starts without it (the default -XX:AOTMode=auto).
#
# The training start needs no GPU and no driver: without libcuda it loads the same classes (Spring, Tomcat, the
# agent's beans) and reports "no NVIDIA driver library found", which is expected here. It exits before any
# lifecycle starts: no port is bound (the one given only has to be valid), nobody is probed, and only DIR is
# left behind. Used by the Dockerfile and by bench/run.sh.
set -eu
if [ $# -lt 2 ]; then
  echo "usage: aot-cache.sh JAR DIR [JVM_FLAG ...]" >&2
  exit 64
fi
jar=$1
dir=$2
shift 2
[ -f "$jar" ] || { echo "aot-cache.sh: no jar at $jar" >&2; exit 66; }
java=${JAVA:-java}
if [ -n "${JAVA_HOME:-}" ] && [ -z "${JAVA:-}" ]; then java=$JAVA_HOME/bin/java; fi

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
"$java" -Djarmode=tools -jar "$jar" extract --force --destination "$dir" --application-filename imexprobe.jar
rm -f "$dir/imexprobe.aot"
log=$(mktemp "${TMPDIR:-/tmp}/aot-train.XXXXXX")
# The "Skipping ... not supported" lines name classes the cache cannot hold (dynamically generated, or linked
# against classes absent at training); they are load-time details, not errors.
if ! SERVER_PORT=8080 "$java" "$@" -XX:MaxRAM=512m -Xlog:aot=error \
    -XX:AOTCacheOutput="$dir/imexprobe.aot" -Dspring.context.exit=onRefresh -jar "$dir/imexprobe.jar" serve >"$log" 2>&1 \
    || [ ! -s "$dir/imexprobe.aot" ]; then
  cat "$log" >&2
  rm -f "$log"
  echo "aot-cache.sh: the training start failed; no cache written (the agent still starts without one)" >&2
  exit 1
fi
rm -f "$log"
echo "aot-cache.sh: $dir/imexprobe.jar + lib/ and $dir/imexprobe.aot ($(wc -c <"$dir/imexprobe.aot") bytes)"
