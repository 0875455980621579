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

{{/* An image reference from {repository, tag, digest}: repository:tag, or repository:tag@digest when pinned. */}}
{{- define "gitops-scaffolder.imageRef" -}}
{{- $ref := printf "%s:%s" .image.repository (.image.tag | default .appVersion) -}}
{{- if .image.digest }}{{ printf "%s@%s" $ref .image.digest }}{{ else }}{{ $ref }}{{ end -}}
{{- end }}

{{/*
  Egress rules for the service's and the runners' pods: DNS to any namespace's
  kube-dns, and TCP to the configured ports anywhere except the link-local
  cloud metadata address (its credentials are the node's, never a run's).
*/}}
{{- define "gitops-scaffolder.egressRules" -}}
- to:
    - namespaceSelector: {}
      podSelector:
        matchLabels:
          k8s-app: kube-dns
  ports:
    - protocol: UDP
      port: 53
    - protocol: TCP
      port: 53
- to:
    - ipBlock:
        cidr: 0.0.0.0/0
        except: ["169.254.169.254/32"]
    - ipBlock:
        cidr: ::/0
        except: ["fd00:ec2::254/128"]
  ports:
    {{- range .Values.networkPolicy.egress.ports }}
    - protocol: TCP
      port: {{ . }}
    {{- end }}
{{- end }}
