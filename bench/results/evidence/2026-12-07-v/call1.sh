#!/usr/bin/env bash
# session 2026-12-07 u, call 1 (run from the bundle of fd86796: session t's final code, plus serve refusing arguments
# that are not settings and warning of IMEXPROBE_* variables no setting reads): session r's call3.sh as it is (the
# goals, one pair alone, 1,000 probes per setting after 300; the guarantees to jobs and deadlines; the domains run with
# IMEXPROBE_MESH_SUBSET=16 on the real driver). Its files keep their call3-/call2- names in $OUT; this folder holds
# them as call1-*. Then every agent log of the call is searched for the new warning: a variable that the scripts set
# and no setting reads would be named there.
bash bench/results/evidence/2026-12-06-r/call3.sh
echo "== variables no setting read, over every agent log of this call (count, line):"
grep -rhoa "[A-Z0-9_]* is set, but no setting of imexprobe reads it[^;]*" /tmp/w-r3-* "$OUT" /tmp/imexprobe* 2>/dev/null \
  | sort | uniq -c | head -20
echo "== agent logs searched: $(grep -rla "Started Main" /tmp/w-r3-* "$OUT" /tmp/imexprobe* 2>/dev/null | wc -l)"
