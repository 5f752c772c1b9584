#!/usr/bin/env bash
# imexprobe preflight on the one H200: (1) two preflight processes, both holding channel0, import each other's
# FABRIC handles (expect exit 0 from both); (2) the same with the second process's channels hidden (mount
# namespace, tmpfs over /dev/nvidia-caps-imex-channels): expect exit 1 from both, with CREATE_NOT_PERMITTED /
# IMPORT_NOT_PERMITTED (800) blaming that process. Prints every report and exit code.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; J=$(bash .gpu-bundle/unpack.sh); JAR=.gpu-bundle/imexprobe.jar
export IMEXPROBE_AUTH_TOKEN=gpu-preflight-token-0123456789ab IMEXPROBE_NODE_NAME=h200 NCCL_NVLS_ENABLE=0
MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices)
D=/dev/nvidia-caps-imex-channels
mkdir -p $D
[ -e $D/channel0 ] || mknod -m 666 $D/channel0 c "$MAJ" 0
ls -l $D
preflight() { # name port peers [namespace setup]
  local name=$1 port=$2 peers=$3 setup=${4:-}
  if [ -z "$setup" ]; then
    SERVER_PORT=$port IMEXPROBE_PEERS_STATIC=$peers $J -jar $JAR preflight --expect 2 --deadline 120s $FORMAT \
      > "$OUT/preflight-$name.out" 2> "$OUT/preflight-$name.log"
  else
    SERVER_PORT=$port IMEXPROBE_PEERS_STATIC=$peers unshare -m bash -c \
      "$setup; exec $J -jar $JAR preflight --expect 2 --deadline 120s $FORMAT" \
      > "$OUT/preflight-$name.out" 2> "$OUT/preflight-$name.log"
  fi
  echo $? > "$OUT/preflight-$name.rc"
}
show() {
  for n in "$@"; do
    echo "--- $n: exit $(cat "$OUT/preflight-$n.rc")"; cat "$OUT/preflight-$n.out"
    grep -E "ERROR|Exception" "$OUT/preflight-$n.log" | head -5
  done
}
PEERS=localhost:18181,localhost:18182
for FORMAT in "" --json; do
  tag=${FORMAT:+json}; tag=${tag:-table}
  echo "=== ($tag) two preflight processes on GPU 0, both with channel0"
  s=$SECONDS
  preflight a-$tag 18181 $PEERS & A=$!; preflight b-$tag 18182 $PEERS & B=$!; wait $A $B
  echo "wall: $((SECONDS - s)) s"
  show a-$tag b-$tag
  echo "=== ($tag) the second process without any channel (tmpfs over $D in its own mount namespace)"
  preflight c-$tag 18181 $PEERS & A=$!; preflight nochan-$tag 18182 $PEERS "mount -t tmpfs tmpfs $D" & B=$!; wait $A $B
  show c-$tag nochan-$tag
done
echo "=== leftovers: GPU processes and memory after the runs (expect none of ours)"
nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader
echo "GPU memory used: $(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1) MiB"
