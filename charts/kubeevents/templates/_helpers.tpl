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

{{- define "kubeevents.checkpointNamespace" -}}
{{- .Values.checkpoint.namespace | default .Release.Namespace -}}
{{- end -}}

{{/* The names of the checkpoint's objects: its index, and two shards a slot. */}}
{{- define "kubeevents.checkpointObjects" -}}
{{- $name := include "kubeevents.checkpointName" . -}}
{{- $names := list $name -}}
{{- range $slot := until (int .Values.checkpoint.maxSlots) -}}
{{- $names = append $names (printf "%s-%d-a" $name $slot) -}}
{{- $names = append $names (printf "%s-%d-b" $name $slot) -}}
{{- end -}}
{{- toJson $names -}}
{{- end -}}

{{/* Whether watch.types names Secrets: secret, secrets, or either with a version or group. */}}
{{- define "kubeevents.watchesSecrets" -}}
{{- range .Values.watch.types -}}
{{- if has (lower (regexReplaceAll "[./].*$" (toString .) "")) (list "secret" "secrets") -}}yes{{- end -}}
{{- end -}}
{{- end -}}
