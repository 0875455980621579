{{/* Labels every object carries. */}}
{{- define "gitops-scaffolder.labels" -}}
app.kubernetes.io/name: gitops-scaffolder
app.kubernetes.io/part-of: gitops-scaffolder
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{/* The labels that select the service's pods (never change them on upgrade). */}}
{{- define "gitops-scaffolder.selectorLabels" -}}
app.kubernetes.io/name: gitops-scaffolder
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The service's ServiceAccount as an RBAC subject. */}}
{{- define "gitops-scaffolder.subject" -}}
- kind: ServiceAccount
  name: gitops-scaffolder
  namespace: {{ .Release.Namespace }}
{{- end }}

{{/* What gitops-scaffolder-viewer grants: read runs, their logs, and clusters. */}}
{{- define "gitops-scaffolder.viewerRules" -}}
- apiGroups: ["gitops-scaffolder.io"]
  resources: ["scaffolds", "clusters"]
  verbs: ["get", "list"]
- apiGroups: ["gitops-scaffolder.io"]
  resources: ["scaffolds/logs"]
  verbs: ["get"]
{{- end }}

{{/* What gitops-scaffolder-operator grants: the viewer's, and start, retry, cancel runs. */}}
{{- define "gitops-scaffolder.operatorRules" -}}
{{ include "gitops-scaffolder.viewerRules" . }}
- apiGroups: ["gitops-scaffolder.io"]
  resources: ["scaffolds"]
  verbs: ["create", "update", "delete"]
{{- end }}
