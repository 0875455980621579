/**
 * ControllerCertificateSource over the Kubernetes API: the caller's inline
 * kubeconfig goes through `loadKubeConfig` (the inline-data-only policy of
 * `model/kubeconfig-policy.ts`, so no `exec` or file path ever runs on the
 * service's host), then the certificate is fetched the way kubeseal does it,
 * through the API server's service proxy (KubeSealingCertificateSource).
 */
import { silentLogger, type Logger } from '../logger.js';
import type { ControllerCertificateSource, ControllerRef } from '../service/controller-certificate-source.js';
import { loadKubeConfig } from './kube-config.js';
import { KubeSealingCertificateSource } from './kube-sealing-certificate-source.js';

/** Collaborators of {@link KubeControllerCertificateSource}. */
export interface KubeControllerCertificateSourceDeps {
  /** @default silentLogger */
  readonly logger?: Logger;
}

/** Implements ControllerCertificateSource with client-node, one KubeConfig per call. */
export class KubeControllerCertificateSource implements ControllerCertificateSource {
  readonly #logger: Logger;

  constructor(deps: KubeControllerCertificateSourceDeps = {}) {
    this.#logger = deps.logger ?? silentLogger;
  }

  fetch(kubeconfig: string, controller: ControllerRef, options: { readonly signal?: AbortSignal }): Promise<string> {
    const kubeConfig = loadKubeConfig({ kind: 'inline', yaml: kubeconfig });
    return new KubeSealingCertificateSource({ kubeConfig, logger: this.#logger }).fetchCertificate(controller, options);
  }
}
