{{- define "icewright.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "icewright.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "icewright.selectorLabels" -}}
app.kubernetes.io/name: {{ include "icewright.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: reconcile
{{- end -}}

{{- define "icewright.labels" -}}
{{ include "icewright.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "icewright.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "icewright.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "icewright.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* The ConfigMap the policies come from, or "" with git-sync. */}}
{{- define "icewright.policiesConfigMap" -}}
{{- if .Values.policies.existingConfigMap -}}
{{- .Values.policies.existingConfigMap -}}
{{- else if .Values.policies.files -}}
{{- printf "%s-policies" (include "icewright.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/* Where the reconciler reads the policies (-chdir). git-sync swaps the
link "current" atomically; icewright resolves the path at every read. */}}
{{- define "icewright.policiesDir" -}}
{{- if .Values.policies.gitSync.enabled -}}
{{- clean (printf "/git/current/%s" .Values.policies.gitSync.path) -}}
{{- else -}}
/etc/icewright
{{- end -}}
{{- end -}}

{{/* Loud, not green: a chart that would run without policies, or a
NetworkPolicy that would cut the catalog off, fails to render. Bounds of
single values (the grace period over the 10 minutes running commits may
take after SIGTERM, replicas) are in values.schema.json. */}}
{{- define "icewright.validate" -}}
{{- $sources := 0 -}}
{{- if .Values.policies.files }}{{ $sources = add1 $sources }}{{ end -}}
{{- if .Values.policies.existingConfigMap }}{{ $sources = add1 $sources }}{{ end -}}
{{- if .Values.policies.gitSync.enabled }}{{ $sources = add1 $sources }}{{ end -}}
{{- if ne $sources 1 -}}
{{- fail (printf "icewright: set exactly one source of policies: policies.files, policies.existingConfigMap or policies.gitSync.enabled (%d set)" $sources) -}}
{{- end -}}
{{- if and .Values.policies.gitSync.enabled (not .Values.policies.gitSync.repo) -}}
{{- fail "icewright: policies.gitSync.enabled needs policies.gitSync.repo" -}}
{{- end -}}
{{- if and .Values.networkPolicy.enabled (or (not .Values.networkPolicy.catalog) (not .Values.networkPolicy.store)) -}}
{{- fail "icewright: networkPolicy.enabled needs networkPolicy.catalog and networkPolicy.store (the peers and ports of each); without them the reconciler could reach neither" -}}
{{- end -}}
{{- if and .Values.networkPolicy.enabled .Values.policies.gitSync.enabled (not .Values.networkPolicy.git) -}}
{{- fail "icewright: networkPolicy.enabled with policies.gitSync needs networkPolicy.git (the git server's peers and ports)" -}}
{{- end -}}
{{- end -}}

{{/* What git-sync's init and sidecar containers share. */}}
{{- define "icewright.gitSyncCommon" -}}
env:
  # The root filesystem is read-only: git's own files go to /tmp.
  - name: HOME
    value: /tmp
{{- with .Values.policies.gitSync.credentialsSecret }}
envFrom:
  - secretRef:
      name: {{ . }}
{{- end }}
resources:
  {{- toYaml .Values.policies.gitSync.resources | nindent 2 }}
securityContext:
  {{- toYaml .Values.securityContext | nindent 2 }}
volumeMounts:
  - name: policies
    mountPath: /git
  - name: tmp
    mountPath: /tmp
{{- end -}}
