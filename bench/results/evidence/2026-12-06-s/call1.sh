#!/usr/bin/env bash
# session 2026-12-06 s, call 1 (run from the bundle, 319efd1: the 401s named by route, a subset's pairs shown as
# unknown): session r's call3.sh as it is (the goals, one pair alone, 1,000 probes per setting after 300; the guarantees
# to jobs and deadlines; the domains run with IMEXPROBE_MESH_SUBSET=16 on the real driver). Its files keep their
# call3- names in $OUT; this folder holds them as call1-*.
exec bash bench/results/evidence/2026-12-06-r/call3.sh
