/**
 * The product's defaults, named once: what a request, a flag or a setting
 * means when it names none. Pure; every layer may import it.
 */

/** The reference environment a cluster is rendered from: `clusters/development/` of the platform. */
export const REFERENCE_ENVIRONMENT = 'development';

/** The branch runs push to and the service reads. */
export const DEFAULT_BRANCH = 'main';

/** The Sealed Secrets controller (its Deployment and Service) a sealing certificate is fetched from. */
export const SEALED_SECRETS_CONTROLLER = { namespace: 'kube-system', name: 'sealed-secrets-controller' } as const;

/** How long a run waits for that controller to be Available (`scaffold-runner --controller-timeout`); a runner Job's deadline counts it. */
export const CONTROLLER_WAIT_MINUTES = 15;
