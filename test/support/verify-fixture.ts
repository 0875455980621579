/**
 * A small but realistic GitOps repository for the verify tests, written to a
 * fresh temp directory: shared `base/` manifests and one cluster,
 * `clusters/demo/`, wired the way DESIGN.md describes (root kustomization
 * listing flux/, Flux Kustomizations `infrastructure` and `apps` dependsOn it,
 * the cluster-config ConfigMap substituted through postBuild, overlays using
 * `${cluster_domain}`, a `$${...}` escape, a HelmRelease and its
 * HelmRepository, a Deployment/Service/Ingress, a SealedSecret whose
 * controller infrastructure releases, and a scaffold.yaml declaring the CRDs
 * of the charts).
 *
 * It verifies clean; each test breaks its own copy on purpose.
 */
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const FILES: Readonly<Record<string, string>> = {
  'base/infrastructure/kustomization.yaml': `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - namespace.yaml
  - helmrepository.yaml
  - helmrelease.yaml
  - sealed-secrets.yaml
  - storageclass.yaml
`,
  'base/infrastructure/namespace.yaml': `apiVersion: v1
kind: Namespace
metadata:
  name: ingress-nginx
`,
  'base/infrastructure/helmrepository.yaml': `apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata:
  name: ingress-nginx
  namespace: ingress-nginx
spec:
  interval: 1h
  url: https://kubernetes.github.io/ingress-nginx
`,
  'base/infrastructure/helmrelease.yaml': `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: ingress-nginx
  namespace: ingress-nginx
spec:
  interval: 30m
  timeout: 10m
  chart:
    spec:
      chart: ingress-nginx
      version: 4.11.3
      sourceRef:
        kind: HelmRepository
        name: ingress-nginx
  install:
    remediation:
      retries: 3
  upgrade:
    remediation:
      retries: 3
  values:
    controller:
      replicaCount: 2
      service:
        annotations:
          external-dns.alpha.kubernetes.io/hostname: ingress.base.invalid
`,
  // The controller of the SealedSecret in apps, whose CRD scaffold.yaml declares for its chart.
  'base/infrastructure/sealed-secrets.yaml': `apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata:
  name: sealed-secrets
  namespace: kube-system
spec:
  interval: 1h
  url: https://bitnami-labs.github.io/sealed-secrets
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: sealed-secrets
  namespace: kube-system
spec:
  interval: 30m
  chart:
    spec:
      chart: sealed-secrets
      version: 2.17.1
      sourceRef:
        kind: HelmRepository
        name: sealed-secrets
`,
  'scaffold.yaml': `apiVersion: gitops-scaffolder.io/v1alpha1
kind: Platform
targetFlux: "2.9"
charts:
  - chart: ingress-nginx
  - chart: sealed-secrets
    crds: [bitnami.com/SealedSecret]
`,
  'base/infrastructure/storageclass.yaml': `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
provisioner: ebs.csi.aws.com
parameters:
  type: gp3
reclaimPolicy: Delete
volumeBindingMode: WaitForFirstConsumer
allowVolumeExpansion: true
`,
  'base/apps/kustomization.yaml': `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: tcr
resources:
  - namespace.yaml
  - web
`,
  'base/apps/namespace.yaml': `apiVersion: v1
kind: Namespace
metadata:
  name: tcr
`,
  'base/apps/web/kustomization.yaml': `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - deployment.yaml
  - service.yaml
  - ingress.yaml
  - dashboard.yaml
`,
  'base/apps/web/deployment.yaml': `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app.kubernetes.io/name: web
spec:
  replicas: 2
  selector:
    matchLabels:
      app.kubernetes.io/name: web
  template:
    metadata:
      labels:
        app.kubernetes.io/name: web
    spec:
      containers:
        - name: web
          image: ghcr.io/example/web:1.4.2
          ports:
            - name: http
              containerPort: 8080
          env:
            - name: PUBLIC_URL
              value: https://web.base.invalid
          resources:
            requests:
              cpu: 100m
              memory: 128Mi
            limits:
              memory: 256Mi
          readinessProbe:
            httpGet:
              path: /healthz
              port: http
`,
  'base/apps/web/service.yaml': `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app.kubernetes.io/name: web
  ports:
    - name: http
      port: 80
      targetPort: http
`,
  'base/apps/web/ingress.yaml': `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  annotations:
    cert-manager.io/cluster-issuer: letsencrypt
spec:
  ingressClassName: nginx
  rules:
    - host: web.base.invalid
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service:
                name: web
                port:
                  name: http
  tls:
    - hosts:
        - web.base.invalid
      secretName: web-tls
`,
  // Grafana's own template syntax, escaped so Flux leaves it alone.
  'base/apps/web/dashboard.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: web-dashboard
  labels:
    grafana_dashboard: "1"
data:
  web.json: |
    {"title": "web", "panels": [{"targets": [{"expr": "sum(rate(http_requests_total{service=\\"$\${service}\\"}[5m]))"}]}]}
`,
  'clusters/demo/kustomization.yaml': `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - flux
`,
  'clusters/demo/flux/kustomization.yaml': `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - cluster-config.yaml
  - infrastructure.yaml
  - apps.yaml
`,
  'clusters/demo/flux/cluster-config.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: cluster-config
  namespace: flux-system
  labels:
    reconcile.fluxcd.io/watch: Enabled
data:
  cluster_name: demo
  cluster_domain: demo.example.net
  cluster_region: eu-west-1
`,
  'clusters/demo/flux/infrastructure.yaml': `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: infrastructure
  namespace: flux-system
spec:
  interval: 10m
  retryInterval: 1m
  timeout: 10m
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
  path: ./clusters/demo/infrastructure
  postBuild:
    substituteFrom:
      - kind: ConfigMap
        name: cluster-config
  healthChecks:
    - apiVersion: helm.toolkit.fluxcd.io/v2
      kind: HelmRelease
      name: ingress-nginx
      namespace: ingress-nginx
    - apiVersion: helm.toolkit.fluxcd.io/v2
      kind: HelmRelease
      name: sealed-secrets
      namespace: kube-system
`,
  'clusters/demo/flux/apps.yaml': `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: flux-system
spec:
  dependsOn:
    - name: infrastructure
  interval: 10m
  retryInterval: 1m
  timeout: 5m
  prune: true
  wait: true
  sourceRef:
    kind: GitRepository
    name: flux-system
  path: ./clusters/demo/apps
  postBuild:
    substituteFrom:
      - kind: ConfigMap
        name: cluster-config
`,
  'clusters/demo/infrastructure/kustomization.yaml': `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../../../base/infrastructure
patches:
  - path: ingress-nginx-values.yaml
`,
  'clusters/demo/infrastructure/ingress-nginx-values.yaml': `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: ingress-nginx
  namespace: ingress-nginx
spec:
  values:
    controller:
      service:
        annotations:
          external-dns.alpha.kubernetes.io/hostname: ingress.\${cluster_domain}
`,
  // JSON6902 host patches: a strategic merge on an Ingress would replace the whole rule list.
  'clusters/demo/apps/kustomization.yaml': `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../../../base/apps
  - sealed
patches:
  - target:
      kind: Ingress
      name: web
    patch: |-
      - op: replace
        path: /spec/rules/0/host
        value: web.\${cluster_domain}
      - op: replace
        path: /spec/tls/0/hosts/0
        value: web.\${cluster_domain}
  - target:
      kind: Deployment
      name: web
    patch: |-
      - op: replace
        path: /spec/template/spec/containers/0/env/0/value
        value: https://web.\${cluster_domain}
`,
  'clusters/demo/apps/sealed/kustomization.yaml': `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - registry-pull-secret.yaml
`,
  'clusters/demo/apps/sealed/registry-pull-secret.yaml': `apiVersion: bitnami.com/v1alpha1
kind: SealedSecret
metadata:
  name: registry-pull-secret
  namespace: tcr
spec:
  encryptedData:
    .dockerconfigjson: AgBy3i4OJSWK+PiTySYZZA9rO43cGDEq
  template:
    metadata:
      name: registry-pull-secret
      namespace: tcr
    type: kubernetes.io/dockerconfigjson
`,
};

/** A fixture repository on disk. */
export interface VerifyFixture {
  /** Absolute path of the repository. */
  readonly root: string;
  /** Writes (creates or replaces) a repository-relative file. */
  write(path: string, content: string): Promise<void>;
  /**
   * Rewrites a file; fails when `change` leaves it unchanged, so a test
   * can never pass because its breakage silently did not apply.
   */
  edit(path: string, change: (text: string) => string): Promise<void>;
  remove(path: string): Promise<void>;
  cleanup(): Promise<void>;
}

/** Writes the valid fixture repository into a new temp directory. */
export async function createVerifyFixture(): Promise<VerifyFixture> {
  const root = await mkdtemp(join(tmpdir(), 'verify-fixture-'));
  const write = async (path: string, content: string): Promise<void> => {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  };
  for (const [path, content] of Object.entries(FILES)) await write(path, content);
  return {
    root,
    write,
    async edit(path, change) {
      const before = await readFile(join(root, path), 'utf8');
      const after = change(before);
      if (after === before) throw new Error(`edit of ${path} changed nothing`);
      await writeFile(join(root, path), after);
    },
    async remove(path) {
      await rm(join(root, path), { recursive: true, force: true });
    },
    async cleanup() {
      await rm(root, { recursive: true, force: true });
    },
  };
}
