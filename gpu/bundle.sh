#!/usr/bin/env bash
# Packs what a GPU host without a JDK needs to run imexprobe: a trimmed Java 25 runtime (tar.xz), the fat jar and
# the benchmark's jar (imexprobe-bench.jar, which bench/run.sh finds beside the fat jar),
# into ./.gpu-bundle/ of the project (git-ignored). On the GPU host:  bash .gpu-bundle/unpack.sh
# then run:  /tmp/imexprobe-jre/bin/java --enable-native-access=ALL-UNNAMED -jar .gpu-bundle/imexprobe.jar check
# Usage (from the project root, after ./mvnw -B package):  bash gpu/bundle.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jdk=${JDK25:-$(ls -d /usr/lib/jvm/*-25-* 2>/dev/null | head -n 1)}
[ -x "$jdk/bin/jlink" ] || { echo "no JDK 25 with jlink found (set JDK25)"; exit 2; }
jar=target/imexprobe.jar
[ -f "$jar" ] || { echo "no $jar: build first (./mvnw -B package)"; exit 2; }
bench_jar=target/imexprobe-bench.jar
[ -f "$bench_jar" ] || { echo "no $bench_jar: build first (./mvnw -B package)"; exit 2; }
out=${GPU_BUNDLE:-.gpu-bundle}

rm -rf "$out" && mkdir -p "$out"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# No --compress: xz packs the plain module image far smaller. jdk.management keeps the JVM's CPU/GC metrics;
# jdk.crypto.ec gives TLS its EC ciphers.
"$jdk/bin/jlink" --add-modules java.base,java.logging,java.management,java.naming,java.net.http,java.security.jgss,java.instrument,java.sql,java.desktop,jdk.unsupported,jdk.management,jdk.crypto.ec,jdk.jfr \
  --strip-debug --no-header-files --no-man-pages --output "$tmp/imexprobe-jre"
tar -C "$tmp" -cJf "$out/jre.tar.xz" imexprobe-jre
cp "$jar" "$out/imexprobe.jar"
cp "$bench_jar" "$out/imexprobe-bench.jar"
cat > "$out/unpack.sh" <<'UNPACK'
#!/usr/bin/env bash
# Unpacks the runtime next to /tmp and prints the java to use.
set -e
here=$(cd "$(dirname "$0")" && pwd)
[ -x /tmp/imexprobe-jre/bin/java ] || tar -C /tmp -xJf "$here/jre.tar.xz"
echo /tmp/imexprobe-jre/bin/java
UNPACK
chmod +x "$out/unpack.sh"
du -sh "$out"/* | sed 's/^/  /'
# The build the figures belong to (the GPU host's copy of the checkout may carry an older .git): gpu/hotpath.sh prints it.
git rev-parse --short HEAD 2>/dev/null | sed "s/\$/$(git diff --quiet HEAD -- src native pom.xml 2>/dev/null || echo '+changes')/" > "$out/COMMIT" || true
echo "bundle ready in $out ($(du -sm "$out" | cut -f1) MiB; keep it under 64 MiB together with what else travels)"
