{{/*
The agent's env for the Node condition: nothing when nodeCondition.enabled is false (the binary's default is off).
Call with the root context.
*/}}
{{- define "imexprobe.nodeConditionEnv" -}}
{{- $c := .Values.nodeCondition }}
{{- if $c.enabled }}
- name: IMEXPROBE_NODECONDITION_ENABLED
  value: "true"
- name: IMEXPROBE_NODECONDITION_ROUNDS
  value: {{ $c.rounds | quote }}
- name: IMEXPROBE_NODECONDITION_HEARTBEAT
  value: {{ $c.heartbeat | quote }}
- name: IMEXPROBE_NODECONDITION_EVENTNAMESPACE
  value: {{ $c.eventNamespace | quote }}
{{- if eq .Values.imex.channel.mode "observer" }}
# Observer: no channel by configuration, so Unknown on this node, not False.
- name: IMEXPROBE_NODECONDITION_CHANNELEXPECTED
  value: "false"
{{- end }}
{{- if eq .Values.mode "perGpu" }}
# Several agents share a node: only the StatefulSet's pod 0 writes its condition.
- name: IMEXPROBE_NODECONDITION_ORDINAL
  value: "0"
{{- end }}
{{- end }}
{{- end }}

{{/*
Whether the agent needs a service-account token: discovery through the API, the Node condition, the
ComputeDomain status, or the clique label.
*/}}
{{- define "imexprobe.usesApi" -}}
{{- if or (eq .Values.peers.discovery "kubernetes") .Values.nodeCondition.enabled .Values.computeDomainStatus.enabled (include "imexprobe.cliqueLabelOn" .) }}true{{ end }}
{{- end }}

{{/* The agent's env for the ComputeDomain status in /v1/node: nothing when computeDomainStatus.enabled is false. */}}
{{- define "imexprobe.computeDomainStatusEnv" -}}
{{- if .Values.computeDomainStatus.enabled }}
- name: IMEXPROBE_COMPUTEDOMAINS_ENABLED
  value: "true"
- name: IMEXPROBE_COMPUTEDOMAINS_INTERVAL
  value: {{ .Values.computeDomainStatus.interval | quote }}
{{- end }}
{{- end }}

{{/*
Whether the agent reads its Node's nvidia.com/gpu.clique label: cliqueLabel.enabled true, or unset (null) while
nodeCondition.enabled, whose ClusterRole already grants get on nodes: no privilege is added unless asked for.
*/}}
{{- define "imexprobe.cliqueLabelOn" -}}
{{- $c := .Values.cliqueLabel.enabled }}
{{- if or (eq (toString $c) "true") (and (kindIs "invalid" $c) .Values.nodeCondition.enabled) }}true{{ end }}
{{- end }}

{{/* The agent's env for its Node's nvidia.com/gpu.clique label: nothing when it does not read it. */}}
{{- define "imexprobe.cliqueLabelEnv" -}}
{{- if include "imexprobe.cliqueLabelOn" . }}
- name: IMEXPROBE_CLIQUELABEL_ENABLED
  value: "true"
- name: IMEXPROBE_CLIQUELABEL_INTERVAL
  value: {{ .Values.cliqueLabel.interval | quote }}
{{- end }}
{{- end }}
