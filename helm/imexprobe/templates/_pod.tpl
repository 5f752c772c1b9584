{{/*
The agent pod template, shared by the perNode DaemonSet and the perGpu StatefulSets.
Call with (dict "root" $ "node" "<node name or empty>" "workload" "<StatefulSet name or empty>").
*/}}
{{- define "imexprobe.podTemplate" -}}
{{- $root := .root }}
{{- $v := $root.Values }}
{{- $perGpu := eq $v.mode "perGpu" }}
{{- $channel := $v.imex.channel.mode }}
{{- $privileged := and (eq $channel "hostPath") $v.imex.channel.hostPath.privileged -}}
metadata:
  labels:
    {{- include "imexprobe.labels" $root | nindent 4 }}
    app.kubernetes.io/component: agent
    {{- with .workload }}
    imexprobe.dev/workload: {{ . }}
    {{- end }}
    {{- with $v.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with $v.podAnnotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  serviceAccountName: {{ include "imexprobe.serviceAccountName" $root }}
  # Only peer discovery through the API and the Node condition need a token; DNS discovery runs without one.
  automountServiceAccountToken: {{ eq (include "imexprobe.usesApi" $root) "true" }}
  enableServiceLinks: false
  {{- with $v.runtimeClassName }}
  runtimeClassName: {{ . }}
  {{- end }}
  {{- with $v.priorityClassName }}
  priorityClassName: {{ . }}
  {{- end }}
  {{- with $v.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  securityContext:
    {{- toYaml $v.podSecurityContext | nindent 4 }}
  {{- with $v.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- if .node }}
  # Pinned to its node: the shared channel claim is allocated on the first node that uses it.
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
          - matchFields:
              - key: metadata.name
                operator: In
                values:
                  - {{ .node | quote }}
    {{- with $v.affinity.podAffinity }}
    podAffinity:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with $v.affinity.podAntiAffinity }}
    podAntiAffinity:
      {{- toYaml . | nindent 6 }}
    {{- end }}
  {{- else }}
  {{- with $v.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- end }}
  {{- with $v.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  terminationGracePeriodSeconds: 30
  containers:
    - name: agent
      image: {{ include "imexprobe.image" $root | quote }}
      imagePullPolicy: {{ $v.image.pullPolicy }}
      args:
        - serve
        {{- range $v.agent.extraArgs }}
        - {{ . | quote }}
        {{- end }}
      ports:
        - name: http
          containerPort: {{ $v.agent.port }}
          protocol: TCP
      env:
        - name: SERVER_PORT
          value: {{ $v.agent.port | quote }}
        {{- with $v.agent.javaToolOptions }}
        # Appended: the image's own flags (SerialGC, C1, tmpdir) stay, and so does its AOT cache.
        - name: JAVA_TOOL_OPTIONS
          value: {{ printf "%s %s" (include "imexprobe.imageJavaToolOptions" $root) . | quote }}
        {{- end }}
        - name: {{ include "imexprobe.channelModeEnv" $root }}
          value: {{ $channel | quote }}
        - name: IMEXPROBE_NODE_NAME
          valueFrom:
            fieldRef:
              fieldPath: spec.nodeName
        - name: IMEXPROBE_AUTH_TOKEN
          valueFrom:
            secretKeyRef:
              name: {{ include "imexprobe.secretName" $root }}
              key: {{ if $v.auth.existingSecret }}{{ $v.auth.existingSecretKey }}{{ else }}token{{ end }}
        {{- if eq $v.peers.discovery "kubernetes" }}
        - name: IMEXPROBE_PEERS_KUBERNETES_SELECTOR
          value: {{ include "imexprobe.peerSelector" $root | quote }}
        - name: IMEXPROBE_PEERS_KUBERNETES_NAMESPACE
          valueFrom:
            fieldRef:
              fieldPath: metadata.namespace
        {{- else }}
        - name: IMEXPROBE_PEERS_DNS
          value: {{ printf "%s.%s.svc:%v" (include "imexprobe.headlessServiceName" $root) (include "imexprobe.namespace" $root) $v.agent.port | quote }}
        {{- end }}
        - name: IMEXPROBE_MESH_INTERVAL
          value: {{ $v.agent.meshInterval | quote }}
        - name: IMEXPROBE_MESH_SUBSET
          value: {{ $v.agent.meshSubset | quote }}
        - name: IMEXPROBE_MESH_CROSS_DOMAIN_SAMPLE_INTERVAL
          value: {{ $v.agent.crossDomainSampleInterval | quote }}
        - name: IMEXPROBE_METRICS_PAIRS
          value: {{ $v.agent.metricsPairs | quote }}
        - name: IMEXPROBE_LADDER_ENABLED
          value: {{ $v.agent.ladderEnabled | quote }}
        - name: IMEXPROBE_DRIVER_PROBEEXCLUSIVEPROCESS
          value: {{ $v.agent.driver.probeExclusiveProcess | quote }}
        - name: IMEXPROBE_DRIVER_MINFREEMEMORY
          value: {{ $v.agent.driver.minFreeMemory | quote }}
        {{- if and (not $perGpu) (not $v.gpuResource.enabled) }}
        # No GPU from the scheduler: the NVIDIA runtime exposes all of the node's GPUs to the agent.
        - name: NVIDIA_VISIBLE_DEVICES
          value: all
        {{- end }}
        - name: NVIDIA_DRIVER_CAPABILITIES
          value: compute,utility
        {{- include "imexprobe.nodeConditionEnv" $root | nindent 8 }}
        {{- include "imexprobe.computeDomainStatusEnv" $root | nindent 8 }}
        {{- include "imexprobe.cliqueLabelEnv" $root | nindent 8 }}
        {{- with $v.agent.extraEnv }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      resources:
        {{- $res := deepCopy $v.resources }}
        {{- $gpuName := $v.gpuResource.name }}
        {{- if and $perGpu (eq $v.perGpu.gpuSource "devicePlugin") }}
        {{- $_ := set $res "limits" (merge (dict $gpuName 1) (default dict $res.limits)) }}
        {{- else if and (not $perGpu) $v.gpuResource.enabled }}
        {{- $_ := set $res "limits" (merge (dict $gpuName $v.gpuResource.count) (default dict $res.limits)) }}
        {{- end }}
        {{- $claims := list }}
        {{- if eq $channel "computeDomain" }}
        {{- $claims = append $claims (dict "name" "imex-channel") }}
        {{- end }}
        {{- if and $perGpu (eq $v.perGpu.gpuSource "dra") }}
        {{- $claims = append $claims (dict "name" "gpu") }}
        {{- end }}
        {{- if $claims }}
        {{- $_ := set $res "claims" $claims }}
        {{- end }}
        {{- toYaml $res | nindent 8 }}
      securityContext:
        {{- if $privileged }}
        {{- /* The API rejects privileged together with allowPrivilegeEscalation: false. */}}
        {{- toYaml (merge (dict "privileged" true "allowPrivilegeEscalation" true) (omit $v.securityContext "allowPrivilegeEscalation")) | nindent 8 }}
        {{- else }}
        {{- toYaml $v.securityContext | nindent 8 }}
        {{- end }}
      startupProbe:
        httpGet:
          path: /actuator/health/liveness
          port: http
        periodSeconds: {{ $v.probes.startup.periodSeconds }}
        failureThreshold: {{ $v.probes.startup.failureThreshold }}
      livenessProbe:
        httpGet:
          path: /actuator/health/liveness
          port: http
        periodSeconds: {{ $v.probes.liveness.periodSeconds }}
        timeoutSeconds: {{ $v.probes.liveness.timeoutSeconds }}
        failureThreshold: {{ $v.probes.liveness.failureThreshold }}
      readinessProbe:
        httpGet:
          path: /actuator/health/readiness
          port: http
        periodSeconds: {{ $v.probes.readiness.periodSeconds }}
        timeoutSeconds: {{ $v.probes.readiness.timeoutSeconds }}
        failureThreshold: {{ $v.probes.readiness.failureThreshold }}
      volumeMounts:
        # The root filesystem is read-only; the JNI library is extracted to java.io.tmpdir=/tmp.
        - name: tmp
          mountPath: /tmp
        {{- if eq $channel "hostPath" }}
        - name: imex-channels
          mountPath: /dev/nvidia-caps-imex-channels
          readOnly: true
        {{- end }}
        {{- with $v.extraVolumeMounts }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
  volumes:
    - name: tmp
      emptyDir:
        sizeLimit: {{ $v.tmpSizeLimit }}
    {{- if eq $channel "hostPath" }}
    - name: imex-channels
      hostPath:
        path: {{ $v.imex.channel.hostPath.path }}
        type: Directory
    {{- end }}
    {{- with $v.extraVolumes }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- if or (eq $channel "computeDomain") (and $perGpu (eq $v.perGpu.gpuSource "dra")) }}
  resourceClaims:
    {{- if eq $channel "computeDomain" }}
    - name: imex-channel
      {{- if $perGpu }}
      # One claim per node, shared by every agent on it: the DRA driver prepares a node's channel for one claim only.
      resourceClaimName: {{ printf "%s-channel" (include "imexprobe.perNodeName" (dict "root" $root "node" .node)) }}
      {{- else }}
      resourceClaimTemplateName: {{ include "imexprobe.channelClaimTemplateName" $root }}
      {{- end }}
    {{- end }}
    {{- if and $perGpu (eq $v.perGpu.gpuSource "dra") }}
    - name: gpu
      resourceClaimTemplateName: {{ printf "%s-gpu" (include "imexprobe.fullname" $root) }}
    {{- end }}
  {{- end }}
{{- end }}
