#!/usr/bin/env bash
# session 2026-12-07 u: start -> ready (readiness 200) of two builds alternately, fake driver, the image's JIT flags, one core.
# OLD=<jar of the build before> NEW=<this build's jar> bash start-ready-ab.sh (run from the project root, after package)
J=${JAVA_HOME:?set JAVA_HOME to a JDK 25}/bin/java
export IMEXPROBE_CUDA_LIBRARY=$PWD/target/native/fake/libcuda.so.1 IMEXPROBE_NVML_LIBRARY=$PWD/target/native/fake/libnvidia-ml.so.1 IMEXPROBE_AUTH_TOKEN=abcdefghijklmnopqrstu SERVER_PORT=18570
for i in 1 2 3 4; do
  for tag in old new; do
    jar=$OLD; [ $tag = new ] && jar=$NEW
    t0=$(date +%s%N)
    taskset -c 1 $J -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -jar $jar serve > /tmp/startab-$tag.log 2>&1 & pid=$!
    until curl -sf -o /dev/null localhost:18570/actuator/health/readiness; do sleep 0.05; done
    t1=$(date +%s%N); echo "$tag $(( (t1-t0)/1000000 )) ms"
    kill $pid; wait $pid 2>/dev/null
  done
done
