/**
 * ControllerCertificateSource over the Kubernetes API: the kubeconfig the
 * policy rebuilt from the caller's text (`model/kubeconfig-policy.ts`: inline
 * data only, so no `exec` or file path ever runs on the service's host) is
 * handed to client-node, then the certificate is fetched the way kubeseal does
 * it, through the API server's service proxy (KubeSealingCertificateSource).
 */
import type { InlineKubeconfig } from '../model/kubeconfig-policy.js';
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

  fetch(kubeconfig: InlineKubeconfig, controller: ControllerRef, options: { readonly signal?: AbortSignal }): Promise<string> {
    const kubeConfig = loadKubeConfig({ kind: 'rebuilt', kubeconfig, label: 'kubeconfig.inline' });
    return new KubeSealingCertificateSource({ kubeConfig, logger: this.#logger }).fetchCertificate(controller, options);
  }
}
