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
  Egress of the runners' pods (and the first rules of the service's): DNS to any
  namespace's kube-dns; TCP to networkPolicy.egress.ports (Git, forges, registries,
  new clusters' API servers) on public addresses only: every internalCidrs range
  (the cluster's own network, link-local with the cloud metadata address,
  loopback) is excepted; and the same ports to allowedInternalCidrs, the internal
  destinations an installation names (an in-house Git server, private API
  endpoints). ipBlock excepts must lie inside their cidr, so they are split by family.
*/}}
{{- define "gitops-scaffolder.egressRules" -}}
{{- $egress := .Values.networkPolicy.egress -}}
{{- $v4 := list -}}{{- $v6 := list -}}
{{- range $egress.internalCidrs }}{{ if contains ":" . }}{{ $v6 = append $v6 . }}{{ else }}{{ $v4 = append $v4 . }}{{ end }}{{ end -}}
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
        except: {{ toJson $v4 }}
    - ipBlock:
        cidr: ::/0
        except: {{ toJson $v6 }}
    {{- range $egress.allowedInternalCidrs }}
    - ipBlock:
        cidr: {{ . }}
    {{- end }}
  ports:
    {{- range $egress.ports }}
    - protocol: TCP
      port: {{ . }}
    {{- end }}
{{- end }}

{{/*
  What only the service reaches: this cluster's API server (TokenReview,
  SubjectAccessReview, Jobs, pod logs) on kubernetesApi.ports at kubernetesApi.cidrs,
  and PostgreSQL on database.port at database.cidrs (empty: anywhere but the cloud
  metadata address). Runners get neither: they never talk to this cluster or the database.
*/}}
{{- define "gitops-scaffolder.serviceEgressRules" -}}
{{- $egress := .Values.networkPolicy.egress -}}
- to:
    {{- range $egress.kubernetesApi.cidrs }}
    - ipBlock:
        cidr: {{ . }}
    {{- end }}
  ports:
    {{- range $egress.kubernetesApi.ports }}
    - protocol: TCP
      port: {{ . }}
    {{- end }}
- to:
    {{- if $egress.database.cidrs }}
    {{- range $egress.database.cidrs }}
    - ipBlock:
        cidr: {{ . }}
    {{- end }}
    {{- else }}
    - ipBlock:
        cidr: 0.0.0.0/0
        except: ["169.254.169.254/32"]
    - ipBlock:
        cidr: ::/0
        except: ["fd00:ec2::254/128"]
    {{- end }}
  ports:
    - protocol: TCP
      port: {{ $egress.database.port }}
{{- end }}
