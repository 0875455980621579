/**
 * The secrets of a scaffold request as the form holds them, what the browser
 * can tell about them before asking the service, and the request body parts
 * they become: how the runner gets the sealing certificate, a registry pull
 * secret, and repository credentials (a token, or a GitHub App for pull
 * requests on GitHub). Pure and import-free, so it is tested under Node.
 *
 * Values go into one request body and nowhere else (no storage, no URL), and
 * are dropped once the run was accepted ({@link clearedSecrets}).
 */

/** `none`: the retry of an upgrade or a removal, which seals nothing (no certificate, kubeconfig or registry pull secret to give). */
export type SealingMode = 'certificate' | 'kubeconfig-inline' | 'kubeconfig-secret' | 'none';

/** The modes a retry offers: the way the retried run got its certificate (`sealing` of the run), or none at all. */
export function sealingModesOf(sealing: 'certificate' | 'kubeconfig' | 'none'): readonly SealingMode[] {
  return sealing === 'certificate' ? ['certificate'] : sealing === 'kubeconfig' ? ['kubeconfig-inline', 'kubeconfig-secret'] : ['none'];
}

/** Access to the new cluster: a Secret in the service's cluster, or the kubeconfig text. */
export type KubeconfigSource =
  { readonly secretRef: { readonly namespace: string; readonly name: string; readonly key: string } } | { readonly inline: string };

/** A GitHub App installed on the repository: the runner mints an installation token with it (pull_request delivery on GitHub). */
export interface GithubAppCredentials {
  readonly app_id: string;
  readonly installation_id: string;
  /** The App's private key (PEM). */
  readonly private_key: string;
}

/** Used for one run only: the service passes them to the runner and never stores them. A token, a GitHub App, or both. */
export interface RepositoryCredentials {
  readonly username?: string;
  readonly token?: string;
  readonly github_app?: GithubAppCredentials;
}

/** The secret parts of a request body (all a retry sends). */
export interface SecretsBody {
  readonly repository?: { readonly credentials?: RepositoryCredentials };
  readonly sealing?: { readonly certificate: string };
  readonly kubeconfig?: KubeconfigSource;
  readonly registry_pull_secret?: { readonly dockerconfigjson: string };
}

export interface SecretValues {
  readonly mode: SealingMode;
  readonly certificate: string;
  readonly kubeconfig: string;
  readonly secretNamespace: string;
  readonly secretName: string;
  readonly secretKey: string;
  readonly registryAuth: string;
  readonly username: string;
  readonly token: string;
  readonly appId: string;
  readonly installationId: string;
  readonly appPrivateKey: string;
}

export const EMPTY_SECRETS: SecretValues = {
  mode: 'certificate',
  certificate: '',
  kubeconfig: '',
  secretNamespace: '',
  secretName: '',
  secretKey: 'kubeconfig',
  registryAuth: '',
  username: '',
  token: '',
  appId: '',
  installationId: '',
  appPrivateKey: '',
};

/** Input ids, the API fields that land on each, and their labels (for the error summary). */
export const SECRET_FIELDS: readonly { readonly id: string; readonly api: readonly string[]; readonly label: string }[] = [
  { id: 'sealing-certificate', api: ['sealing.certificate', 'sealing'], label: 'Sealing certificate' },
  { id: 'kubeconfig-inline', api: ['kubeconfig.inline', 'kubeconfig'], label: 'Kubeconfig' },
  { id: 'kubeconfig-secret-namespace', api: ['kubeconfig.secretRef.namespace', 'kubeconfig.secretRef'], label: 'Secret namespace' },
  { id: 'kubeconfig-secret-name', api: ['kubeconfig.secretRef.name'], label: 'Secret name' },
  { id: 'kubeconfig-secret-key', api: ['kubeconfig.secretRef.key'], label: 'Secret key' },
  { id: 'registry-auth', api: ['registry_pull_secret.dockerconfigjson', 'registry_pull_secret'], label: 'Registry pull secret' },
  { id: 'repository-username', api: ['repository.credentials.username'], label: 'Repository user name' },
  { id: 'repository-token', api: ['repository.credentials.token', 'repository.credentials'], label: 'Repository token' },
  { id: 'github-app-id', api: ['repository.credentials.github_app.app_id', 'repository.credentials.github_app'], label: 'GitHub App id' },
  { id: 'github-app-installation-id', api: ['repository.credentials.github_app.installation_id'], label: 'Installation id' },
  { id: 'github-app-private-key', api: ['repository.credentials.github_app.private_key'], label: 'GitHub App private key' },
];

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const NUMERIC_ID = /^[0-9]{1,20}$/;

/** Whether any GitHub App field is filled in (then all three must be). */
function githubAppGiven(values: SecretValues): boolean {
  return values.appId.trim() !== '' || values.installationId.trim() !== '' || values.appPrivateKey.trim() !== '';
}

function credentialsOf(values: SecretValues, githubApp: boolean): RepositoryCredentials | undefined {
  const app: GithubAppCredentials | undefined =
    githubApp && githubAppGiven(values)
      ? { app_id: values.appId.trim(), installation_id: values.installationId.trim(), private_key: `${values.appPrivateKey.trim()}\n` }
      : undefined;
  if (values.token === '' && app === undefined) return undefined;
  return {
    ...(values.token === '' ? {} : { token: values.token, ...(values.username.trim() === '' ? {} : { username: values.username.trim() }) }),
    ...(app === undefined ? {} : { github_app: app }),
  };
}

/**
 * The secret parts of a request body.
 * @param githubApp whether the request can use a GitHub App (pull_request delivery on GitHub): otherwise its fields are not sent
 */
export function secretsRequest(values: SecretValues, githubApp = false): SecretsBody {
  // A run that seals nothing (an upgrade, a removal) uses the service's own forge credentials: the service refuses any other.
  if (values.mode === 'none') return {};
  const trimmedCertificate = values.certificate.trim();
  const kubeconfig: KubeconfigSource | undefined =
    values.mode === 'kubeconfig-inline'
      ? { inline: values.kubeconfig }
      : values.mode === 'kubeconfig-secret'
        ? { secretRef: { namespace: values.secretNamespace.trim(), name: values.secretName.trim(), key: values.secretKey.trim() } }
        : undefined;
  const credentials = credentialsOf(values, githubApp);
  const registryAuth = values.registryAuth.trim();
  return {
    ...(values.mode === 'certificate' ? { sealing: { certificate: trimmedCertificate === '' ? '' : `${trimmedCertificate}\n` } } : {}),
    ...(kubeconfig === undefined ? {} : { kubeconfig }),
    ...(registryAuth === '' ? {} : { registry_pull_secret: { dockerconfigjson: registryAuth } }),
    ...(credentials === undefined ? {} : { repository: { credentials } }),
  };
}

/** What the browser can tell before asking the service (which checks everything again). */
export function secretIssues(values: SecretValues, githubApp = false): Map<string, string> {
  const issues = new Map<string, string>();
  if (values.mode === 'certificate') {
    if (values.certificate.trim() === '') issues.set('sealing-certificate', 'Paste the cluster’s Sealed Secrets certificate (PEM) or load it from a file.');
    else if (!values.certificate.includes('-----BEGIN CERTIFICATE-----'))
      issues.set('sealing-certificate', 'This is not a PEM certificate (-----BEGIN CERTIFICATE-----).');
  } else if (values.mode === 'kubeconfig-inline') {
    if (values.kubeconfig.trim() === '') issues.set('kubeconfig-inline', 'Paste the new cluster’s kubeconfig.');
  } else if (values.mode === 'kubeconfig-secret') {
    if (!DNS_LABEL.test(values.secretNamespace.trim())) issues.set('kubeconfig-secret-namespace', 'Enter the namespace of the Secret (a DNS label).');
    if (values.secretName.trim() === '') issues.set('kubeconfig-secret-name', 'Enter the name of the Secret.');
    if (!/^[-._a-zA-Z0-9]+$/.test(values.secretKey.trim())) issues.set('kubeconfig-secret-key', 'Enter the Secret’s key holding the kubeconfig.');
  }
  if (values.mode !== 'none' && values.registryAuth.trim() !== '') {
    try {
      JSON.parse(values.registryAuth);
    } catch {
      issues.set('registry-auth', 'This is not JSON: paste a .dockerconfigjson ({"auths": {…}}).');
    }
  }
  if (values.username.trim() !== '' && values.token === '') issues.set('repository-token', 'A user name needs its token.');
  if (githubApp && githubAppGiven(values)) {
    if (!NUMERIC_ID.test(values.appId.trim())) issues.set('github-app-id', 'Enter the App’s numeric id (its settings page, “App ID”).');
    if (!NUMERIC_ID.test(values.installationId.trim()))
      issues.set('github-app-installation-id', 'Enter the installation’s numeric id (the number at the end of its settings URL).');
    // The key's PEM header is not spelled out here: the dashboard's assets carry no key marker at all.
    const key = values.appPrivateKey.trim();
    if (key === '') issues.set('github-app-private-key', 'Paste the App’s private key (the .pem file GitHub gave you).');
    else if (!key.startsWith('-----BEGIN ') || !key.includes('PRIVATE'))
      issues.set('github-app-private-key', 'This is not a PEM private key: paste the whole .pem file.');
  }
  return issues;
}

/** The values once the run was accepted: every secret dropped, only the sealing mode kept (it is no secret). */
export function clearedSecrets(values: SecretValues): SecretValues {
  return { ...EMPTY_SECRETS, mode: values.mode };
}
