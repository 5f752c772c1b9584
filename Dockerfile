# syntax=docker/dockerfile:1
# imexprobe agent image: java -jar /app/imexprobe.jar serve (Spring Boot), port 8080.
#
# Multi-arch: docker buildx build --platform linux/amd64,linux/arm64 -t <registry>/imexprobe:0.1.0 --push .
# The build stage deliberately has no --platform=$BUILDPLATFORM: like every stage without one it runs on the
# TARGET platform (under QEMU emulation when that differs from the builder's), because the Maven build compiles
# the JNI shim with the gcc of the machine it runs on and packs it into the jar as /native/linux-<arch>/.
# Building on $BUILDPLATFORM would ship an amd64 shim inside the arm64 image.
# Official Eclipse Temurin images (Ubuntu 24.04 "noble"); pin a digest in your registry mirror if you need to.
FROM eclipse-temurin:25-jdk-noble AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc make libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY .mvn/ .mvn/
COPY mvnw pom.xml ./
COPY native/ native/
COPY src/main/ src/main/
# Tests ran in CI; the image build only packages (the pom still runs make -C native for this architecture).
RUN ./mvnw -B -DskipTests package \
    && cp target/imexprobe.jar /imexprobe.jar

FROM eclipse-temurin:25-jre-noble
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="imexprobe" \
      org.opencontainers.image.description="Proves CUDA fabric memory (IMEX) export and import between GPUs; REST and Prometheus metrics." \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.source="https://github.com/imexprobe/imexprobe" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="docker.io/library/eclipse-temurin:25-jre-noble"
WORKDIR /app
# Sized for a small, mostly idle agent (docs/performance.md, measured with bench/run.sh): SerialGC (what the JVM
# picks in a 512Mi pod anyway; no GC threads, no G1 remembered sets), C1 only (TieredStopAtLevel=1: no C2
# compiler threads competing with the node's jobs at start, ~60 MiB less resident code and compiler memory,
# ready sooner), and two malloc arenas instead of one per thread (~30 MiB less RSS). Set before the training
# start below, which must run with the flags of production. One hardware work queue per CUDA context instead of
# 8: the driver maps 24 MiB of host memory for the context instead of 70 (measured on the H200, probe latency
# unchanged); the agent's driver work is a few small copies at a time and gains nothing from more queues.
# The driver compiles the pattern's fill kernel (PTX) for every new context unless its JIT cache has it; the cache
# is ~/.nv/ComputeCache by default, which a read-only root filesystem and a user without a home do not have, so /tmp
# (writable, see below) holds it (measured on the H200: 8 ms per context, i.e. per probing round, without a cache;
# 0.07 ms from it; 24 KiB).
ENV JAVA_TOOL_OPTIONS="-Djava.io.tmpdir=/tmp -XX:MaxRAMPercentage=60 -XX:+UseSerialGC -XX:TieredStopAtLevel=1" \
    MALLOC_ARENA_MAX=2 \
    CUDA_DEVICE_MAX_CONNECTIONS=1 \
    CUDA_CACHE_PATH=/tmp/cuda-cache \
    SERVER_PORT=8080 \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility
# The jar extracted (/app/imexprobe.jar + /app/lib/) and the JDK's AOT cache (/app/imexprobe.aot) recorded by one
# training start of `serve` with this very JRE: ready about 2 s sooner and ~10 MiB smaller (docs/performance.md).
# It needs no GPU. Owned by root and read-only to the agent: nothing in the image is writable by it.
COPY --from=build /imexprobe.jar /tmp/imexprobe.jar
COPY src/main/docker/aot-cache.sh /tmp/aot-cache.sh
RUN sh /tmp/aot-cache.sh /tmp/imexprobe.jar /app \
    && rm -rf /tmp/* /root/.cache
# The JNI library is extracted to java.io.tmpdir at start: with a read-only root filesystem /tmp must be a
# writable mount (the chart mounts an emptyDir; plain docker: --read-only --tmpfs /tmp).
USER 65532:65532
EXPOSE 8080
# Kubernetes probes /actuator/health/{liveness,readiness}; the image has no curl to check itself with.
HEALTHCHECK NONE
# A cache that does not fit (another JVM build, other GC flags) is skipped with one warning, never fatal.
ENTRYPOINT ["java","-XX:+ExitOnOutOfMemoryError","-XX:AOTCache=/app/imexprobe.aot","-jar","/app/imexprobe.jar"]
CMD ["serve"]
