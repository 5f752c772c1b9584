{{/*
Prometheus template text (for alert labels and annotations) that names the CUresult code in $value, as the
agent's CuResult table does; 0 means no driver call failed (the failing stage made none, e.g. transfer).
*/}}
{{- define "imexprobe.cuResultNameTmpl" -}}
{{`{{ $c := printf "%.0f" $value }}`}}
{{- $names := list "1" "CUDA_ERROR_INVALID_VALUE" "2" "CUDA_ERROR_OUT_OF_MEMORY" "3" "CUDA_ERROR_NOT_INITIALIZED" "100" "CUDA_ERROR_NO_DEVICE" "101" "CUDA_ERROR_INVALID_DEVICE" "201" "CUDA_ERROR_INVALID_CONTEXT" "400" "CUDA_ERROR_INVALID_HANDLE" "401" "CUDA_ERROR_ILLEGAL_STATE" "600" "CUDA_ERROR_NOT_READY" "700" "CUDA_ERROR_ILLEGAL_ADDRESS" "800" "CUDA_ERROR_NOT_PERMITTED" "801" "CUDA_ERROR_NOT_SUPPORTED" "999" "CUDA_ERROR_UNKNOWN" }}
{{- `{{ if eq $c "0" }}none` }}
{{- range $i, $e := $names }}{{ if eq (mod $i 2) 0 }}{{ printf "{{ else if eq $c %q }}%s" $e (index $names (add1 $i)) }}{{ end }}{{ end }}
{{- `{{ else }}CUresult {{ $c }}{{ end }}` }}
{{- end }}

{{/*
The alerting rules, as the body of a PrometheusRule spec (groups: ...). Kept in one helper so that tests can
render exactly what ships. Prometheus' own template syntax passes through as literal text ({{` ... `}}).
*/}}
{{- define "imexprobe.ruleGroupsShipped" -}}
{{- $a := .Values.alerts }}
{{- $job := include "imexprobe.job" . }}
{{- $runbook := $a.runbookBaseUrl }}
{{- $stale := mul 3 (include "imexprobe.durationSeconds" .Values.agent.meshInterval | int) }}
{{- $cuName := include "imexprobe.cuResultNameTmpl" . }}
{{- /* The agent alerts take the agent's IMEX domain (its first GPU's: a node's GPUs share one) as label domain,
       so Alertmanager groups and inhibits them with the pair and domain alerts; an agent without a GPU keeps none. */}}
{{- $domainOf := printf "topk by (namespace, pod) (1, imexprobe_gpu_imex_domain_info{job=\"%s\"})" $job }}
{{- $domainWas := printf "topk by (namespace, pod) (1, last_over_time(imexprobe_gpu_imex_domain_info{job=\"%s\"}[1h]))" $job -}}
groups:
  - name: imexprobe
    rules:
      - alert: ImexprobePairImportFailing
        # Value: the CUresult code of the last probe's first failing stage (0 when no driver call failed).
        expr: |
          imexprobe_pair_last_cu_result{job="{{ $job }}"}
            and on (namespace, pod, source_node, source_gpu, target_node, target_gpu)
          imexprobe_pair_up{job="{{ $job }}"} == 0
        for: {{ $a.pairFailingFor }}
        # The CUresult's name is an annotation, not a label: a label that changes while pending resets for:, so a
        # pair failing on and on with varying codes (800, then a timeout's none) would never fire.
        labels:
          severity: {{ $a.severity.pairImportFailing }}
        annotations:
          cu_result: >-
            {{ $cuName }}
          summary: >-
            IMEX import from {{`{{ $labels.source_node }} {{ $labels.source_gpu }}`}} into {{`{{ $labels.target_node }} {{ $labels.target_gpu }}`}} fails: {{ $cuName }}
          description: >-
            Every probe from exporter {{`{{ $labels.source_gpu }}`}} on {{`{{ $labels.source_node }}`}} into importer
            {{`{{ $labels.target_gpu }}`}} on {{`{{ $labels.target_node }}`}} has failed for {{ $a.pairFailingFor }}; the last one stopped
            at {{ $cuName }} (code {{`{{ $value }}`}}).{{`{{ with query (printf "topk(1, sum by (stage, cu_result) (increase(imexprobe_stage_results_total{job=\"`}}{{ $job }}{{`\",pod=\"%s\",cu_result!~\"CUDA_SUCCESS|none\"}[15m])) > 0)" $labels.pod) }}`}}
            Most frequent failing stage on that agent in the last 15 minutes: {{`{{ . | first | label "stage" }} ({{ . | first | label "cu_result" }}).{{ end }}`}}
            The finding is in /v1/mesh of pod {{`{{ $labels.pod }}`}}.
          runbook_url: {{ printf "%s#imexprobepairimportfailing" $runbook }}
      - alert: ImexprobePairImportIntermittent
        # Value: the share of the pair's probes that failed over the window. A pair that fails now and then is up
        # as often as not, so ImexprobePairImportFailing (down for pairFailingFor in a row) never fires for it.
        # Counted per pair, not per pod: an agent that restarts keeps its pairs' history (increase() reads each pod's
        # counters, and their resets, on their own). The pair must also have passed in the window: failing every
        # probe is ImexprobePairImportFailing's. So is a pair for which that alert fired within the window (the
        # unless): without it a pair that went down for good fired this too while the window still held its passes
        # from before, and every outage that ended left this alert behind it until its failures left the window.
        # ALERTS holds a series only while an alert is pending or firing, so the unless costs next to nothing,
        # where a subquery over every pair's history loaded window / interval × pairFailingFor / interval samples
        # per pair at each evaluation (about 25 million for 576 GPUs, half Prometheus' default query.max-samples).
        expr: |
          (
              sum by (namespace, domain, source_node, source_gpu, target_node, target_gpu) (increase(imexprobe_probes_total{job="{{ $job }}", verdict="fail"}[{{ $a.pairIntermittentWindow }}]))
            /
              sum by (namespace, domain, source_node, source_gpu, target_node, target_gpu) (increase(imexprobe_probes_total{job="{{ $job }}", verdict=~"pass|fail"}[{{ $a.pairIntermittentWindow }}]))
          ) > {{ $a.pairIntermittentRatio }}
            and on (namespace, domain, source_node, source_gpu, target_node, target_gpu)
          sum by (namespace, domain, source_node, source_gpu, target_node, target_gpu) (increase(imexprobe_probes_total{job="{{ $job }}", verdict="fail"}[{{ $a.pairIntermittentWindow }}])) >= {{ $a.pairIntermittentMinFailures }}
            and on (namespace, domain, source_node, source_gpu, target_node, target_gpu)
          sum by (namespace, domain, source_node, source_gpu, target_node, target_gpu) (increase(imexprobe_probes_total{job="{{ $job }}", verdict="pass"}[{{ $a.pairIntermittentWindow }}])) > 0
            unless on (namespace, domain, source_node, source_gpu, target_node, target_gpu)
          max_over_time(ALERTS{alertname="ImexprobePairImportFailing", alertstate="firing", job="{{ $job }}"}[{{ $a.pairIntermittentWindow }}])
        for: {{ $a.pairIntermittentFor }}
        labels:
          severity: {{ $a.severity.pairImportIntermittent }}
        annotations:
          summary: >-
            IMEX import from {{`{{ $labels.source_node }} {{ $labels.source_gpu }}`}} into {{`{{ $labels.target_node }} {{ $labels.target_gpu }}`}} fails intermittently: {{`{{ $value | humanizePercentage }}`}} of its probes in {{ $a.pairIntermittentWindow }}
          description: >-
            {{`{{ $pair := printf "namespace=%q,domain=%q,source_node=%q,source_gpu=%q,target_node=%q,target_gpu=%q" $labels.namespace $labels.domain $labels.source_node $labels.source_gpu $labels.target_node $labels.target_gpu }}`}}Over
            the last {{ $a.pairIntermittentWindow }}, {{`{{ $value | humanizePercentage }}`}} of the probes from exporter {{`{{ $labels.source_gpu }}`}} on {{`{{ $labels.source_node }}`}}
            into importer {{`{{ $labels.target_gpu }}`}} on {{`{{ $labels.target_node }}`}} failed{{`{{ with query (printf "sum(increase(imexprobe_probes_total{job=\"`}}{{ $job }}{{`\",%s,verdict=\"fail\"}[`}}{{ $a.pairIntermittentWindow }}{{`]))" $pair) }}{{ $f := . | first | value }}{{ with query (printf "sum(increase(imexprobe_probes_total{job=\"`}}{{ $job }}{{`\",%s,verdict=~\"pass|fail\"}[`}}{{ $a.pairIntermittentWindow }}{{`]))" $pair) }} (about {{ printf "%.0f" $f }} of {{ . | first | value | printf "%.0f" }}){{ end }}{{ end }}`}}
            and the others passed, and so for {{ $a.pairIntermittentFor }} (threshold: a share above {{ $a.pairIntermittentRatio }} and at least
            {{ $a.pairIntermittentMinFailures }} failures). The pair works, then does not: suspect what comes and goes (NVLink errors, fabric flaps, IMEX
            daemon restarts, a peer restarting).{{`{{ with query (printf "imexprobe_pair_up{job=\"`}}{{ $job }}{{`\",%s}" $pair) }}{{ $pod := . | first | label "pod" }}{{ with query (printf "topk(1, sum by (stage, cu_result) (increase(imexprobe_stage_results_total{job=\"`}}{{ $job }}{{`\",pod=\"%s\",cu_result!~\"CUDA_SUCCESS|none\"}[`}}{{ $a.pairIntermittentWindow }}{{`])) > 0)" $pod) }}`}}
            Most frequent failing stage on its exporter's agent over the window: {{`{{ . | first | label "stage" }} ({{ . | first | label "cu_result" }}).{{ end }}`}}
            The pair's last result is in /v1/mesh of pod {{`{{ $pod }}`}}.{{`{{ end }}`}}
          runbook_url: {{ printf "%s#imexprobepairimportintermittent" $runbook }}
      - alert: ImexprobeTargetUnreachable
        # Value: how many source nodes (all of whose GPUs fail) fail to import into this target GPU. One bad pair is
        # ImexprobePairImportFailing; most exporters failing into one importer point at the importer. Nodes, not
        # GPUs, and more than half of those probing it: one broken exporter node with 4 GPUs made every healthy
        # target of the domain look unreachable from 4 sources.
        expr: |
          (
            count by (namespace, domain, target_node, target_gpu) (
              max by (namespace, domain, source_node, target_node, target_gpu) (imexprobe_pair_up{job="{{ $job }}"}) == 0
            ) >= {{ $a.targetMinSources }}
          )
          and on (namespace, domain, target_node, target_gpu)
          (
            count by (namespace, domain, target_node, target_gpu) (
              max by (namespace, domain, source_node, target_node, target_gpu) (imexprobe_pair_up{job="{{ $job }}"}) == 0
            )
            > 0.5 * count by (namespace, domain, target_node, target_gpu) (
              max by (namespace, domain, source_node, target_node, target_gpu) (imexprobe_pair_up{job="{{ $job }}"})
            )
          )
        for: {{ $a.targetUnreachableFor }}
        labels:
          severity: {{ $a.severity.targetUnreachable }}
        annotations:
          summary: >-
            IMEX target {{`{{ $labels.target_node }} {{ $labels.target_gpu }}`}} fails imports from {{`{{ $value }}`}} source nodes: suspect the target
          description: >-
            {{`{{ $value }}`}} source nodes, more than half of those probing it, have failed to import into GPU {{`{{ $labels.target_gpu }}`}} on node
            {{`{{ $labels.target_node }}`}} for {{ $a.targetUnreachableFor }} (threshold: {{ $a.targetMinSources }} source nodes). When most
            exporters fail into one importer, look at the importer: its IMEX channel, its IMEX daemon, its fabric state.
          runbook_url: {{ printf "%s#imexprobetargetunreachable" $runbook }}
      - alert: ImexprobeDomainFailing
        # Value: the share of the IMEX domain's pairs that fail. Pairs exist only within a domain, so a domain whose
        # pairs mostly fail points at what its members share (IMEX daemons, fabric manager, NVLink switches).
        expr: |
          (
              sum by (namespace, domain) (1 - max by (namespace, domain, source_node, source_gpu, target_node, target_gpu) (imexprobe_pair_up{job="{{ $job }}"}))
            /
              count by (namespace, domain) (max by (namespace, domain, source_node, source_gpu, target_node, target_gpu) (imexprobe_pair_up{job="{{ $job }}"}))
          ) > {{ $a.domainFailingRatio }}
        for: {{ $a.domainFailingFor }}
        labels:
          severity: {{ $a.severity.domainFailing }}
        annotations:
          summary: >-
            IMEX domain {{`{{ $labels.domain }}`}}: {{`{{ $value | humanizePercentage }}`}} of its pairs fail
          description: >-
            {{`{{ $value | humanizePercentage }}`}} of the probed pairs of IMEX domain {{`{{ $labels.domain }}`}} have failed for
            {{ $a.domainFailingFor }} (threshold: more than {{ $a.domainFailingRatio }}). When most pairs of one domain fail, suspect
            what its members share: the IMEX daemons of its ComputeDomain, the fabric manager, the NVLink switches, a driver
            rollout. The pair and target alerts of this domain follow from it: group and inhibit them by domain.
          runbook_url: {{ printf "%s#imexprobedomainfailing" $runbook }}
      - alert: ImexprobeAgentDown
        # domain: the agent's last known IMEX domain (its metrics are gone while it is down).
        expr: |
          (up{job="{{ $job }}"} == 0) * on (namespace, pod) group_left (domain) {{ $domainWas }}
            or on (namespace, pod) up{job="{{ $job }}"} == 0
            or absent(up{job="{{ $job }}"})
        for: {{ $a.agentDownFor }}
        labels:
          severity: {{ $a.severity.agentDown }}
        annotations:
          summary: >-
            {{`{{ if $labels.pod }}imexprobe agent {{ $labels.pod }} on node {{ $labels.node }} is down{{ else }}`}}no imexprobe agent of job {{ $job }} is scraped{{`{{ end }}`}}
          description: >-
            {{`{{ if $labels.pod }}Prometheus could not scrape {{ $labels.pod }} ({{ $labels.instance }}) on node {{ $labels.node }}`}}
            for {{ $a.agentDownFor }}: the pairs it exports are unmeasured, not healthy.{{`{{ else }}`}}No target of job {{ $job }}
            has been up for {{ $a.agentDownFor }}: the agents are not running, or Prometheus does not select their ServiceMonitor.{{`{{ end }}`}}
          runbook_url: {{ printf "%s#imexprobeagentdown" $runbook }}
      - alert: ImexprobeProbesStale
        # No finished mesh round for 3 intervals of {{ .Values.agent.meshInterval }}.
        expr: |
          (time() - imexprobe_mesh_last_cycle_timestamp_seconds{job="{{ $job }}"} > {{ $stale }})
              * on (namespace, pod) group_left (domain) {{ $domainOf }}
            or on (namespace, pod) time() - imexprobe_mesh_last_cycle_timestamp_seconds{job="{{ $job }}"} > {{ $stale }}
        for: {{ $a.probesStaleFor }}
        labels:
          severity: {{ $a.severity.probesStale }}
        annotations:
          summary: >-
            imexprobe agent {{`{{ $labels.pod }}`}} on node {{`{{ $labels.node }}`}} has not finished a mesh round for {{`{{ humanizeDuration $value }}`}}
          description: >-
            The agent answers scrapes but its probe loop has stalled (no mesh round for more than {{ $stale }} s, 3 intervals
            of {{ .Values.agent.meshInterval }}): a driver call may hang. Its pair metrics are stale.
          runbook_url: {{ printf "%s#imexprobeprobesstale" $runbook }}
      - alert: ImexprobeNoImexChannel
        # An observer has no channel by design (imexprobe_channel_mode{mode="observer"}), nor needs one an agent
        # whose GPUs all cannot make fabric memory (FABRIC_UNSUPPORTED, VMM_UNSUPPORTED): never this alert.
        expr: |
          (
              (imexprobe_imex_channels{job="{{ $job }}"} == 0) * on (namespace, pod) group_left (domain) {{ $domainOf }}
            or on (namespace, pod) imexprobe_imex_channels{job="{{ $job }}"} == 0
          )
            unless on (namespace, pod) imexprobe_channel_mode{job="{{ $job }}", mode="observer"}
            unless on (namespace, pod) (
                imexprobe_gpus_fabric_capable{job="{{ $job }}"} == 0
              and on (namespace, pod) imexprobe_gpus_visible{job="{{ $job }}"} > 0
            )
        for: {{ $a.noImexChannelFor }}
        labels:
          severity: {{ $a.severity.noImexChannel }}
        annotations:
          summary: >-
            imexprobe agent {{`{{ $labels.pod }}`}} on node {{`{{ $labels.node }}`}} has no usable IMEX channel
          description: >-
            The agent on node {{`{{ $labels.node }}`}} can open no /dev/nvidia-caps-imex-channels/channelN, so cuMemCreate with
            FABRIC handles fails with CUDA_ERROR_NOT_PERMITTED (800). Check that the pod got its channel claim
            (kubectl describe pod {{`{{ $labels.pod }}`}}) and that its ComputeDomain is Ready.
          runbook_url: {{ printf "%s#imexprobenoimexchannel" $runbook }}
      - alert: ImexprobeDriverCallStuck
        expr: |
          (imexprobe_driver_calls_stuck{job="{{ $job }}"} > 0) * on (namespace, pod) group_left (domain) {{ $domainOf }}
            or on (namespace, pod) imexprobe_driver_calls_stuck{job="{{ $job }}"} > 0
        for: {{ $a.driverCallStuckFor }}
        labels:
          severity: {{ $a.severity.driverCallStuck }}
        annotations:
          summary: >-
            imexprobe agent {{`{{ $labels.pod }}`}} on node {{`{{ $labels.node }}`}} has {{`{{ $value }}`}} driver calls that never returned
          description: >-
            {{`{{ $value }}`}} driver calls of the agent on node {{`{{ $labels.node }}`}} passed their deadline and have not returned
            for {{ $a.driverCallStuckFor }}. Each holds a driver thread and what its probe had imported until the process exits;
            when all are held the agent goes not-live and is restarted. Look for altered handles sent to /v1/imports and for
            driver or IMEX daemon trouble on the node (dmesg, nvidia-smi -q).
          runbook_url: {{ printf "%s#imexprobedrivercallstuck" $runbook }}
      - alert: ImexprobeFabricUnhealthy
        # Value: the GPU's NVML fabric state (1 not started, 2 in progress, 3 completed with a problem). A GPU whose
        # fabric is not supported (state 0: an HGX node, or NVML not asked) never fires. Such a GPU is an IMEX domain
        # of its own node, so its pairs across nodes are not probed and no pair alert can speak for it.
        expr: |
          (
              (imexprobe_fabric_state{job="{{ $job }}"} > 0 and on (namespace, pod, gpu, UUID) imexprobe_fabric_healthy{job="{{ $job }}"} == 0)
                * on (namespace, pod) group_left (domain) {{ $domainOf }}
            or on (namespace, pod, gpu, UUID)
              (imexprobe_fabric_state{job="{{ $job }}"} > 0 and on (namespace, pod, gpu, UUID) imexprobe_fabric_healthy{job="{{ $job }}"} == 0)
          )
        for: {{ $a.fabricUnhealthyFor }}
        labels:
          severity: {{ $a.severity.fabricUnhealthy }}
        annotations:
          summary: >-
            GPU {{`{{ $labels.gpu }} ({{ $labels.UUID }})`}} on node {{`{{ $labels.node }}`}} is not healthy in its NVLink fabric (state {{`{{ $value }}`}})
          description: >-
            The GPU has supported an NVLink fabric but has not been registered in it without a problem for {{ $a.fabricUnhealthyFor }}
            (NVML fabric state {{`{{ $value }}`}}: 1 not started, 2 in progress, 3 completed with an error status or an unhealthy
            health mask). Its FABRIC imports across the NVLink domain fail, and the agents treat it as an IMEX domain of its own
            node, so no pair alert speaks for it. /v1/node of pod {{`{{ $labels.pod }}`}} names the finding (FABRIC_STATE_STUCK,
            FABRIC_UNHEALTHY); check the fabric manager and nvidia-smi -q (Fabric section).
          runbook_url: {{ printf "%s#imexprobefabricunhealthy" $runbook }}
{{- end }}

{{/*
What ships, as operators tune it: prometheusRule.disabled.<AlertName> drops an alert (and imex.channel.mode=observer
drops ImexprobeNoImexChannel), additionalLabels join every
alert's labels, an empty alerts.runbookBaseUrl drops runbook_url, prometheusRule.extraRules become group
imexprobe.extra.
*/}}
{{- define "imexprobe.ruleGroups" -}}
{{- $p := .Values.prometheusRule }}
{{- /* A pair's gauge holds one probe's result for a whole interval (and its jitter): with pairFailingFor no longer than
       the interval, one failed probe fired ImexprobePairImportFailing. */}}
{{- if not (index $p.disabled "ImexprobePairImportFailing") }}
{{- $failingFor := include "imexprobe.promDurationMillis" .Values.alerts.pairFailingFor | int64 }}
{{- if le $failingFor (include "imexprobe.promDurationMillis" .Values.agent.meshInterval | int64) }}
{{- fail (printf "alerts.pairFailingFor (%s) must be longer than agent.meshInterval (%s): a pair's result stands until its next probe, so one failed probe would fire ImexprobePairImportFailing. Make it two intervals at least (the default 5m is ten of the default 30s), shorten agent.meshInterval, or drop the alert with prometheusRule.disabled.ImexprobePairImportFailing." .Values.alerts.pairFailingFor .Values.agent.meshInterval) }}
{{- end }}
{{- end }}
{{- $groups := (fromYaml (include "imexprobe.ruleGroupsShipped" .)).groups }}
{{- $out := list }}
{{- range $g := $groups }}
{{- $rules := list }}
{{- range $r := $g.rules }}
{{- /* An observer has no channel by design: ImexprobeNoImexChannel would fire on every node. */}}
{{- $observer := and (eq $r.alert "ImexprobeNoImexChannel") (eq $.Values.imex.channel.mode "observer") }}
{{- if not (or (index $p.disabled $r.alert) $observer) }}
{{- $_ := set $r "labels" (merge (deepCopy $p.additionalLabels) $r.labels) }}
{{- if not $.Values.alerts.runbookBaseUrl }}
{{- $_ := set $r "annotations" (omit $r.annotations "runbook_url") }}
{{- end }}
{{- $rules = append $rules $r }}
{{- end }}
{{- end }}
{{- if $rules }}
{{- $out = append $out (dict "name" $g.name "rules" $rules) }}
{{- end }}
{{- end }}
{{- with $p.extraRules }}
{{- $out = append $out (dict "name" "imexprobe.extra" "rules" .) }}
{{- end }}
{{- toYaml (dict "groups" $out) }}
{{- end }}
