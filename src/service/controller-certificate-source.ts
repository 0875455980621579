/**
 * The certificate a cluster's Sealed Secrets controller serves now, read by
 * the service itself for the sealing check of a cluster's detail
 * (`POST /api/v1/clusters/{name}/sealing-check`). A run reads it in its
 * runner; this check has no run, so the service reaches the cluster's API
 * server with the kubeconfig the caller sent, used for this one request and
 * never stored. Implemented by `kubernetes/kube-controller-certificate-source.ts`.
 */
import type { InlineKubeconfig } from '../model/kubeconfig-policy.js';

/** The controller's Service (the runner's SealingControllerRef, named here so the service layer stays off the runner). */
export interface ControllerRef {
  readonly namespace: string;
  readonly name: string;
}

/** Fetches a controller's certificate with a caller's kubeconfig. */
export interface ControllerCertificateSource {
  /**
   * @param kubeconfig the caller's kubeconfig as the policy rebuilt it (`readKubeconfig`), never the caller's text
   * @returns the PEM text the controller serves
   * @throws ValidationError for a kubeconfig that names no usable context (never quoting it)
   * @throws NotFoundError when the controller's Service or its certificate endpoint is missing
   * @throws UnavailableError when the API server or the controller cannot answer
   */
  fetch(kubeconfig: InlineKubeconfig, controller: ControllerRef, options: { readonly signal?: AbortSignal }): Promise<string>;
}
