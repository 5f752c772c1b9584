#!/usr/bin/env bash
# session 2026-12-07 aa, call 2 (the bundle of 9236c5b or later): the mute-peer part of session o's call 2 as it is
# (its lines 1-44: a mute peer and a silent TCP peer against timeout=3s, five probes and one, the exporter's live
# allocations and context after, a good peer last), to show on a GPU that a release the probe's deadline leaves no
# time for is now "deferred" (call 1, with 1ad554a, reported it as a driver "timeout"), and that the answer still
# comes at the deadline with nothing left allocated.
set -u
sed -n '1,44p' bench/results/evidence/2026-12-06-o/call2.sh > /tmp/aa-call2-mute.sh
OUT=$OUT bash /tmp/aa-call2-mute.sh
W=$(ls -d /tmp/w-o2-* | tail -1)
grep -ho '"name":"release"[^}]*' $W/mute-*.json $W/silent.json $W/good.json | tee $OUT/call2-release-stages.txt
( cd $W && tar czf $OUT/call2-files.tgz --exclude='*.jfr' . )
date -u
