#!/usr/bin/env bash
# session 2026-12-06 p, call 2 (run from the bundle): Tomcat's keep-alive limit against the probe's p99. Tomcat
# closes a kept-alive connection after its 100th request (maxKeepAliveRequests), so about one probe in 50 pays a
# new connection (caller -> exporter, exporter -> importer). This build (b28aa9b) turns the limit off
# (server.tomcat.max-keep-alive-requests=-1); a pair with Tomcat's limit back (SERVER_TOMCAT_MAX_KEEP_ALIVE_REQUESTS=100)
# beside it, 1,000 probes per setting, both orders.
set -u
W=/tmp/w-p2-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name" | head -1; } > $W/host.txt
cp $W/host.txt $OUT/call2-host.txt
for o in forward reverse; do
  ORDER=$([ $o = reverse ] && echo reverse) OUT=$W/ka-$o OLD_CLASSES=/none COUNT=1000 VARIANTS="ka100:SERVER_TOMCAT_MAX_KEEP_ALIVE_REQUESTS=100" timeout 240 bash gpu/hotpath.sh > $W/ka-$o.out 2>&1; echo "== ka $o exit $?"
  grep -E "^/probe push" $W/ka-$o/hotpath.log | cut -c1-190
  sed -n '/=== summary/,$p' $W/ka-$o/hotpath.log | grep -v "^|" | sed -n '2,14p' | cut -c1-130
  cp $W/ka-$o/hotpath.json $OUT/call2-ka-$o.json 2>/dev/null; cp $W/ka-$o/hotpath.log $OUT/call2-ka-$o.log 2>/dev/null
done
date -u; ls -la $OUT
