{{/* The release's full name: RELEASE-kubeevents, or RELEASE if it says kubeevents. */}}
{{- define "kubeevents.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "kubeevents.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "kubeevents.labels" -}}
{{ include "kubeevents.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "kubeevents.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "kubeevents.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{- define "kubeevents.leaseName" -}}
{{- .Values.leaderElection.leaseName | default (include "kubeevents.fullname" .) -}}
{{- end -}}

{{- define "kubeevents.checkpointName" -}}
{{- .Values.checkpoint.name | default (printf "%s-checkpoint" (include "kubeevents.fullname" .)) -}}
{{- end -}}
