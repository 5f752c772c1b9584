{{/* Chart name, trimmed to a DNS label. */}}
{{- define "imexprobe.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Resource name prefix: <release>-imexprobe, or <release> when it already says imexprobe. */}}
{{- define "imexprobe.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "imexprobe.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels that select the agent pods (Service, NetworkPolicy, peer discovery). Never change them on upgrade. */}}
{{- define "imexprobe.selectorLabels" -}}
app.kubernetes.io/name: {{ include "imexprobe.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: agent
{{- end }}

{{- define "imexprobe.labels" -}}
helm.sh/chart: {{ include "imexprobe.chart" . }}
app.kubernetes.io/name: {{ include "imexprobe.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: imexprobe
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Namespace of every namespaced object: namespaceOverride, else the release namespace. */}}
{{- define "imexprobe.namespace" -}}
{{- default .Release.Namespace .Values.namespaceOverride }}
{{- end }}

{{/* An API (group/version/Kind) the cluster serves, as Helm reports it, or as the apiVersions value says. */}}
{{- define "imexprobe.hasApi" -}}
{{- if or (.root.Capabilities.APIVersions.Has .api) (has .api .root.Values.apiVersions) }}true{{ end }}
{{- end }}

{{/* The label selector string the agent uses to find its peers through the Kubernetes API. */}}
{{- define "imexprobe.peerSelector" -}}
app.kubernetes.io/name={{ include "imexprobe.name" . }},app.kubernetes.io/instance={{ .Release.Name }},app.kubernetes.io/component=agent
{{- end }}

{{- define "imexprobe.serviceAccountName" -}}
{{- default (include "imexprobe.fullname" .) .Values.serviceAccount.name }}
{{- end }}

{{/* The one place that names the agent's channel-mode variable (imexprobe.channel.mode). */}}
{{- define "imexprobe.channelModeEnv" -}}
IMEXPROBE_CHANNEL_MODE
{{- end }}

{{/* The image's JAVA_TOOL_OPTIONS (Dockerfile ENV; HelmChartTest checks they agree): agent.javaToolOptions is appended. */}}
{{- define "imexprobe.imageJavaToolOptions" -}}
-Djava.io.tmpdir=/tmp -XX:MaxRAMPercentage=60 -XX:+UseSerialGC -XX:TieredStopAtLevel=1
{{- end }}

{{- define "imexprobe.secretName" -}}
{{- default (printf "%s-auth" (include "imexprobe.fullname" .)) .Values.auth.existingSecret }}
{{- end }}

{{- define "imexprobe.headlessServiceName" -}}
{{- include "imexprobe.fullname" . }}
{{- end }}

{{- define "imexprobe.computeDomainName" -}}
{{- default (include "imexprobe.fullname" .) .Values.imex.channel.computeDomain.name }}
{{- end }}

{{/* The ResourceClaimTemplate that the DRA driver's controller generates for our ComputeDomain. */}}
{{- define "imexprobe.channelClaimTemplateName" -}}
{{- printf "%s-channel" (include "imexprobe.computeDomainName" .) }}
{{- end }}

{{- define "imexprobe.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/*
Per-node object name: <fullname>-<node>, dots turned into dashes; when that would exceed 47 characters (a
StatefulSet's pods carry a controller-revision-hash label of name + 11 characters, limited to 63) it becomes
<fullname>-<start of node>-<6 hex of sha256(node)>, still unique per node.
Call with (dict "root" $ "node" $node).
*/}}
{{- define "imexprobe.perNodeName" -}}
{{- $full := include "imexprobe.fullname" .root }}
{{- $slug := .node | lower | replace "." "-" }}
{{- $name := printf "%s-%s" $full $slug }}
{{- if gt (len $name) 47 }}
{{- $name = printf "%s-%s" ($name | trunc 40 | trimSuffix "-") (sha256sum .node | trunc 6) }}
{{- end }}
{{- $name }}
{{- end }}

{{/* A duration (Spring's 500ms, 30s, 2m, 1h; Prometheus' 1h30m, 1d too) in milliseconds, as the rules read alerts.*. */}}
{{- define "imexprobe.promDurationMillis" -}}
{{- $d := toString . }}
{{- if not (regexMatch "^([0-9]+(ms|s|m|h|d|w|y))+$" $d) }}{{ fail (printf "cannot read duration %q (use ms, s, m or h)" $d) }}{{ end }}
{{- $ms := dict "ms" 1 "s" 1000 "m" 60000 "h" 3600000 "d" 86400000 "w" 604800000 "y" 31536000000 }}
{{- $total := 0 }}
{{- range $part := regexFindAll "[0-9]+(ms|s|m|h|d|w|y)" $d -1 }}
{{- $total = add $total (mul (regexFind "^[0-9]+" $part | int64) (index $ms (regexReplaceAll "^[0-9]+" $part ""))) }}
{{- end }}
{{- $total }}
{{- end }}

{{/* The same in whole seconds, at least 1. */}}
{{- define "imexprobe.durationSeconds" -}}
{{- max (div (include "imexprobe.promDurationMillis" . | int64) 1000) 1 }}
{{- end }}

{{/* The job label of the agents' scrape: the ServiceMonitor names it after the Service. */}}
{{- define "imexprobe.job" -}}
{{- include "imexprobe.headlessServiceName" . }}
{{- end }}

{{/* Checks that are easier to say here than in values.schema.json. */}}
{{- define "imexprobe.validate" -}}
{{- if and (eq .Values.imex.channel.mode "computeDomain") (not (include "imexprobe.hasApi" (dict "root" . "api" "resource.nvidia.com/v1beta1/ComputeDomain"))) }}
{{- fail "imex.channel.mode=computeDomain needs the NVIDIA DRA driver: this cluster serves no resource.nvidia.com/v1beta1 ComputeDomain. Install the DRA driver (with its ComputeDomain CRD), or use imex.channel.mode=observer (the default) or hostPath. When rendering without a cluster, add resource.nvidia.com/v1beta1/ComputeDomain to apiVersions." }}
{{- end }}
{{- if eq .Values.mode "perGpu" }}
{{- if empty .Values.perGpu.nodes }}
{{- fail "mode=perGpu needs perGpu.nodes: the node names to place per-GPU agents on" }}
{{- end }}
{{- if ne (len .Values.perGpu.nodes) (len (uniq .Values.perGpu.nodes)) }}
{{- fail "perGpu.nodes lists a node twice" }}
{{- end }}
{{- end }}
{{- end }}
