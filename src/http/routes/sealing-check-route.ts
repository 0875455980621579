/**
 * `POST /api/v1/clusters/{name}/sealing-check`: the cluster's detail with its
 * SealedSecrets compared with the certificate its controller serves now,
 * naming those sealed with an older key (stale: not the newest, yet decryptable
 * while the controller holds that key; `rotate` has the controller re-encrypt them).
 *
 * A POST, not a GET parameter: the kubeconfig is a credential, so it travels
 * in the body (never in a URL, which proxies and access logs keep), is rebuilt
 * from inline data only by the kubeconfig policy (only that rebuilt object
 * reaches the Kubernetes client, never the caller's text), is used for this
 * request only and is never stored or logged. The caller may send the
 * certificate instead (`kubeseal --fetch-cert`), as for a scaffold.
 */
import type { z } from 'zod';
import { ValidationError } from '../../errors.js';
import { readKubeconfig } from '../../model/kubeconfig-policy.js';
import { parseSealingCertificate, type SealingCertificate } from '../../sealing/sealing-certificate.js';
import type { ControllerCertificateSource } from '../../service/controller-certificate-source.js';
import { clusterParamsSchema, clusterViewSchema, sealingCheckRequestSchema } from '../cluster-schemas.js';
import type { RouteContext } from '../route-context.js';
import { errorResponsesOf } from '../wire-schemas.js';
import { SEALED_SECRETS_CONTROLLER } from '../../model/defaults.js';

/** The certificate to compare a cluster's SealedSecrets with, or why there is none. */
export type SealingComparison = () => Promise<{ readonly certificate?: SealingCertificate; readonly reason?: string }>;

/** Builds the cluster's detail; `compare` is called only once the cluster is known to exist. */
export type ClusterDetail = (
  name: string,
  query: { repository_url?: string; branch?: string },
  signal: AbortSignal,
  compare: SealingComparison,
) => Promise<z.output<typeof clusterViewSchema>>;

/** The controller kubeseal and the runner ask by default. */
const DEFAULT_CONTROLLER = SEALED_SECRETS_CONTROLLER;

/**
 * What the controller served, parsed like any sealing certificate. A refused
 * kubeconfig is the caller's error (400); a controller that cannot be reached
 * or serves no usable certificate is the answer's `reason`: the repository
 * side of the detail is still worth showing.
 */
async function fetched(
  read: () => Promise<string>,
  where: string,
  now: Date,
  signal: AbortSignal,
): Promise<{ certificate?: SealingCertificate; reason?: string }> {
  let pem: string;
  try {
    pem = await read();
  } catch (error) {
    if (signal.aborted || error instanceof ValidationError || !(error instanceof Error)) throw error;
    // Messages of the certificate source name the Service and the HTTP status, never the kubeconfig.
    return { reason: `the certificate of ${where} could not be read: ${error.message}` };
  }
  try {
    return { certificate: parseSealingCertificate(pem, 'controller certificate', now) };
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return { reason: `${where} serves a certificate this service cannot use: ${error.message}` };
  }
}

/** Registers `POST /api/v1/clusters/{name}/sealing-check`. */
export function registerSealingCheckRoute(context: RouteContext, detail: ClusterDetail, certificates: ControllerCertificateSource | undefined): void {
  const { app, signalOf } = context;

  app.post(
    '/api/v1/clusters/:name/sealing-check',
    {
      schema: {
        summary: 'One cluster of the fleet, its SealedSecrets compared with the certificate its controller serves now',
        description:
          "With `kubeconfig.inline` the service reads the certificate from the cluster's Sealed Secrets controller through the API server's service proxy (as kubeseal does); with `sealing.certificate` it compares with that one. `sealing.stale` names the SealedSecrets sealed with another (older) key than the one the controller serves now: still decryptable while the controller holds that key, they are moved to the newest key, values unchanged, by POST …/rotate (the controller re-encrypts them). When the controller cannot be reached, `controller_certificate` is null and `reason` says why. The kubeconfig is used for this request only.",
        tags: ['fleet'],
        params: clusterParamsSchema,
        body: sealingCheckRequestSchema,
        response: { 200: clusterViewSchema, ...errorResponsesOf(400, 404, 413, 415) },
      },
    },
    async (request, reply) => {
      const { kubeconfig, sealing, repository, controller = DEFAULT_CONTROLLER } = request.body;
      const now = new Date();
      let compare: SealingComparison;
      if (sealing !== undefined) {
        const certificate = parseSealingCertificate(sealing.certificate, 'sealing.certificate', now);
        compare = async () => ({ certificate });
      } else {
        const reading = readKubeconfig(kubeconfig!.inline, 'kubeconfig.inline');
        if (!reading.ok) throw new ValidationError(reading.issues);
        const rebuilt = reading.kubeconfig;
        const where = `Service ${controller.namespace}/${controller.name}`;
        compare =
          certificates === undefined
            ? async () => ({ reason: 'this service does not reach clusters (no controller certificate source is configured): send sealing.certificate' })
            : () => fetched(() => certificates.fetch(rebuilt, controller, { signal: signalOf(reply) }), where, now, signalOf(reply));
      }
      const query = {
        ...(repository?.url !== undefined ? { repository_url: repository.url } : {}),
        ...(repository?.branch !== undefined ? { branch: repository.branch } : {}),
      };
      const view = await detail(request.params.name, query, signalOf(reply), compare);
      void reply.header('cache-control', 'no-store');
      return view;
    },
  );
}
