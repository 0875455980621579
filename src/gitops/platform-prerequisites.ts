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
 * - `artifacts`: per Flux Kustomization that applies another source (the
 *   Gateway API's CRDs from its own repository), the CRDs it installs.
 * - `bootstrap`: the layer every other one depends on, and what it must
 *   install before anything else can run (a CNI, CRDs everything needs).
 * - `provided`: Secrets, ConfigMaps and kinds the infrastructure brings
 *   (a cloud's own CRDs, a Secret an operator creates).
 */
import { z } from 'zod';

/** `group/Kind`, the way a CRD is named in findings (`cert-manager.io/Certificate`). */
const groupKindSchema = z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/[A-Z][A-Za-z0-9]*$/, 'must be group/Kind, e.g. cert-manager.io/Certificate');

/** `namespace/name` of an object the infrastructure provides. */
const namespacedNameSchema = z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/, 'must be namespace/name');

/** The Flux minor versions whose behaviour verify knows; later ones behave like the last. */
export const TARGET_FLUX_VERSIONS = ['2.8', '2.9'] as const;

/** `2.8`, `2.9`, `2.10`…: a Flux minor version. */
export const targetFluxSchema = z.string({ error: 'must be a string' }).regex(/^2\.[0-9]+$/, 'must be a Flux minor version such as 2.8 or 2.9');

/** A Service a chart creates, named after its release (`{release}-haproxy`), with its named ports. */
const chartServiceSchema = z
  .object({
    name: z.string().regex(/^[-a-z0-9{}]+$/, 'must be a Service name, {release} (or {name} of an operand) standing for the object\'s name'),
    /** Its labels, which ServiceMonitors select it by. */
    labels: z.record(z.string(), z.string()).default({}),
    /** Its named ports, which ServiceMonitors scrape. */
    ports: z.array(z.string().min(1)).default([]),
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
  /**
   * `namespace/name` of the registry pull secrets written only when the caller
   * supplies them (scaffold.yaml credentials with a `supplied` key).
   */
  readonly suppliedPullSecrets?: readonly string[];
}
