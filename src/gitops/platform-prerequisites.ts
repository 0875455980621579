/**
 * What a platform tells `verify` that the tree alone cannot: the parts of
 * `scaffold.yaml` that describe the cluster before and around the layers.
 *
 * - `targetFlux`: the Flux minor version the clusters run (substitution
 *   semantics differ: strict from 2.9).
 * - `charts`: per Helm chart, the CRDs it installs and the Services it
 *   creates. Charts cannot be rendered offline, so this is the only way verify
 *   knows that a HelmRelease of cert-manager makes `cert-manager.io`
 *   Certificates applicable, or creates a Service with port `http-metrics`.
 *   Per pinned release (`releases`), the upstream tag these facts were read
 *   at, the values options the release accepts (external-dns's providers:
 *   1.21.1 has no `digitalocean`) and the CRDs that must exist before its
 *   controller starts (Cilium's operator looks for TLSRoute once, at start).
 * - `artifacts`: per Flux Kustomization that applies another source (the
 *   Gateway API's CRDs from its own repository), the CRDs it installs.
 * - `bootstrap`: the layer every other one depends on, and what it must
 *   install before anything else can run (a CNI, CRDs everything needs).
 * - `provided`: Secrets, ConfigMaps and kinds the infrastructure brings
 *   (a cloud's own CRDs, a Secret an operator creates).
 */
import { z } from 'zod';
import type { InfraPlatform } from './layer-catalog-schema.js';

/** `group/Kind`, the way a CRD is named in findings (`cert-manager.io/Certificate`). */
export const groupKindSchema = z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/[A-Z][A-Za-z0-9]*$/, 'must be group/Kind, e.g. cert-manager.io/Certificate');

/** `namespace/name` of an object the infrastructure provides. */
const namespacedNameSchema = z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/, 'must be namespace/name');

/** The Flux minor versions whose behaviour verify knows; later ones behave like the last. */
export const TARGET_FLUX_VERSIONS = ['2.8', '2.9'] as const;

/** `2.8`, `2.9`, `2.10`…: a Flux minor version. */
export const targetFluxSchema = z.string({ error: 'must be a string' }).regex(/^2\.[0-9]+$/, 'must be a Flux minor version such as 2.8 or 2.9');

/** A Service a chart creates, named after its release (`{release}-haproxy`), with its named ports. */
const chartServiceSchema = z
  .object({
    name: z.string().regex(/^[-a-z0-9{}]+$/, "must be a Service name, {release} (or {name} of an operand) standing for the object's name"),
    /** Its labels, which ServiceMonitors select it by. */
    labels: z.record(z.string(), z.string()).default({}),
    /** Its named ports, which ServiceMonitors scrape. */
    ports: z.array(z.string().min(1)).default([]),
    /**
     * A dotted path into the HelmRelease's `values` that must be `true` for the
     * chart to create it (cilium's hubble-ui: `hubble.ui.enabled`); without
     * it, every release of the chart creates the Service.
     */
    enabledBy: z
      .string()
      .regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, 'must be a dotted path into the chart values, e.g. hubble.ui.enabled')
      .optional(),
  })
  .strict();

/**
 * One option a chart release reads from its values, and every value the
 * release accepts for it: a value outside the list is what the pinned
 * binary refuses at start (external-dns's `--provider` is a strict enum).
 */
export const releaseOptionSchema = z
  .object({
    /** What the option is called in findings (`provider`). */
    name: z.string().min(1),
    /** The values paths that set it, dotted, first match wins (`provider.name`, then `provider` as a string). */
    values: z.array(z.string().regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, 'must be a dotted values path such as provider.name')).min(1),
    allowed: z.array(z.string().min(1)).min(1),
  })
  .strict();

/** What one pinned release of a chart was checked for, at which upstream tag. */
export const chartReleaseSchema = z
  .object({
    /** The chart version a HelmRelease pins (`spec.chart.spec.version`). */
    version: z.string().min(1),
    /** The application version the chart ships (its Chart.yaml appVersion). */
    appVersion: z.string().min(1).optional(),
    /** Where the facts were read: `owner/repo@tag`. */
    checked: z.string().regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+@\S+$/, 'must be owner/repo@tag, the upstream tag the facts were read at'),
    options: z.array(releaseOptionSchema).default([]),
    /** CRDs that must exist before the release's controller starts; one that appears later is not seen until a restart. */
    requires: z.array(groupKindSchema).default([]),
  })
  .strict();

/** What one Helm chart installs that the tree cannot show. */
export const chartSpecSchema = z
  .object({
    /** The chart's name as HelmRelease `spec.chart.spec.chart` gives it (or the OCIRepository name of a chartRef). */
    chart: z.string().min(1),
    crds: z.array(groupKindSchema).default([]),
    services: z.array(chartServiceSchema).default([]),
    /** Custom resources its operator turns into Services, `{name}` standing for the resource's name. */
    operands: z.array(z.object({ kind: groupKindSchema, services: z.array(chartServiceSchema).min(1) }).strict()).default([]),
    /** The pinned releases whose options and prerequisites were checked upstream. */
    releases: z
      .array(chartReleaseSchema)
      .default([])
      .refine((releases) => new Set(releases.map((r) => r.version)).size === releases.length, 'must not list a version twice'),
  })
  .strict();

/** A Flux Kustomization of the tree that applies another artifact, and the CRDs that artifact holds. */
export const artifactSpecSchema = z
  .object({
    /** The Kustomization's metadata.name. */
    kustomization: z.string().min(1),
    crds: z.array(groupKindSchema).min(1),
  })
  .strict();

/** The first layer: what every other layer needs. */
export const bootstrapSpecSchema = z
  .object({
    /** The catalog layer (or reference Kustomization) every other one depends on, directly or not. */
    layer: z.string().min(1),
    /** Charts of the CNI: a HelmRelease of one of them anywhere but in the bootstrap layer starts too late. */
    cni: z.array(z.string().min(1)).default([]),
    /** CRDs the bootstrap layer must install (by a CRD object or a declared chart). */
    crds: z.array(groupKindSchema).default([]),
  })
  .strict();

/** What exists on every cluster of the platform without the tree creating it. */
export const providedSpecSchema = z
  .object({
    secrets: z.array(namespacedNameSchema).default([]),
    configMaps: z.array(namespacedNameSchema).default([]),
    crds: z.array(groupKindSchema).default([]),
  })
  .strict();

/** The descriptor fields of this file, merged into the platform descriptor's schema. */
export const platformPrerequisitesShape = {
  targetFlux: targetFluxSchema.optional(),
  charts: z.array(chartSpecSchema).optional(),
  artifacts: z.array(artifactSpecSchema).optional(),
  bootstrap: bootstrapSpecSchema.optional(),
  provided: providedSpecSchema.optional(),
};

export type ChartSpec = z.infer<typeof chartSpecSchema>;
export type ChartRelease = z.infer<typeof chartReleaseSchema>;
export type ReleaseOption = z.infer<typeof releaseOptionSchema>;
export type ArtifactSpec = z.infer<typeof artifactSpecSchema>;
export type BootstrapSpec = z.infer<typeof bootstrapSpecSchema>;
export type ProvidedSpec = z.infer<typeof providedSpecSchema>;

/** The prerequisites verify reads; all optional, as a repository without scaffold.yaml has none. */
export interface PlatformPrerequisites {
  readonly targetFlux?: string;
  /** Undefined: the platform does not declare its charts, so what they install is unknown (notes, not findings). */
  readonly charts?: readonly ChartSpec[];
  readonly artifacts?: readonly ArtifactSpec[];
  readonly bootstrap?: BootstrapSpec;
  readonly provided?: ProvidedSpec;
  /** scaffold.yaml `attributes.infra_provider.platform`: per infrastructure provider, what it brings before Flux. */
  readonly infraPlatforms?: Readonly<Record<string, InfraPlatform>>;
  /**
   * `namespace/name` of the registry pull secrets written only when the caller
   * supplies them (scaffold.yaml credentials with a `supplied` key).
   */
  readonly suppliedPullSecrets?: readonly string[];
}

/**
 * The prerequisites of one cluster, given its infrastructure provider: the
 * CRDs that provider installs itself count as provided, and the bootstrap
 * layer need not install them (GKE's Gateway API CRDs).
 */
export function prerequisitesForInfra(prerequisites: PlatformPrerequisites, infraProvider: string | undefined): PlatformPrerequisites {
  const managed = infraProvider !== undefined ? (prerequisites.infraPlatforms?.[infraProvider]?.crds ?? []) : [];
  if (managed.length === 0) return prerequisites;
  const provided = prerequisites.provided ?? { secrets: [], configMaps: [], crds: [] };
  return {
    ...prerequisites,
    provided: { ...provided, crds: [...new Set([...provided.crds, ...managed])] },
    ...(prerequisites.bootstrap
      ? { bootstrap: { ...prerequisites.bootstrap, crds: prerequisites.bootstrap.crds.filter((crd) => !managed.includes(crd)) } }
      : {}),
  };
}
