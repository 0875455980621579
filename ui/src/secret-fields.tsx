/**
 * The secrets of a scaffold request, as form fields: how the runner gets the
 * new cluster's sealing certificate (the certificate itself, a kubeconfig, or
 * a kubeconfig Secret in the service's cluster), your own registry pull
 * secret, and repository credentials. Shared by the new-scaffold form and the
 * retry dialog: the service never stores secrets, so a retry sends them again.
 *
 * Values typed here go into one request body and nowhere else (no storage, no URL).
 */
import type { ComponentChildren } from 'preact';
import type { KubeconfigSource, RetryRequestBody } from './api';

export type SealingMode = 'certificate' | 'kubeconfig-inline' | 'kubeconfig-secret';

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
];

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** The secret parts of a request body. */
export function secretsRequest(values: SecretValues): RetryRequestBody {
  const trimmedCertificate = values.certificate.trim();
  const kubeconfig: KubeconfigSource | undefined =
    values.mode === 'kubeconfig-inline'
      ? { inline: values.kubeconfig }
      : values.mode === 'kubeconfig-secret'
        ? { secretRef: { namespace: values.secretNamespace.trim(), name: values.secretName.trim(), key: values.secretKey.trim() } }
        : undefined;
  return {
    ...(values.mode === 'certificate' ? { sealing: { certificate: trimmedCertificate === '' ? '' : `${trimmedCertificate}\n` } } : {}),
    ...(kubeconfig === undefined ? {} : { kubeconfig }),
    ...(values.registryAuth.trim() === '' ? {} : { registry_pull_secret: { dockerconfigjson: values.registryAuth.trim() } }),
    ...(values.token === '' ? {} : { repository: { credentials: { token: values.token, ...(values.username.trim() === '' ? {} : { username: values.username.trim() }) } } }),
  };
}

/** What the browser can tell before asking the service (which checks everything again). */
export function secretIssues(values: SecretValues): Map<string, string> {
  const issues = new Map<string, string>();
  if (values.mode === 'certificate') {
    if (values.certificate.trim() === '') issues.set('sealing-certificate', 'Paste the cluster’s Sealed Secrets certificate (PEM) or load it from a file.');
    else if (!values.certificate.includes('-----BEGIN CERTIFICATE-----')) issues.set('sealing-certificate', 'This is not a PEM certificate (-----BEGIN CERTIFICATE-----).');
  } else if (values.mode === 'kubeconfig-inline') {
    if (values.kubeconfig.trim() === '') issues.set('kubeconfig-inline', 'Paste the new cluster’s kubeconfig.');
  } else {
    if (!DNS_LABEL.test(values.secretNamespace.trim())) issues.set('kubeconfig-secret-namespace', 'Enter the namespace of the Secret (a DNS label).');
    if (values.secretName.trim() === '') issues.set('kubeconfig-secret-name', 'Enter the name of the Secret.');
    if (!/^[-._a-zA-Z0-9]+$/.test(values.secretKey.trim())) issues.set('kubeconfig-secret-key', 'Enter the Secret’s key holding the kubeconfig.');
  }
  if (values.registryAuth.trim() !== '') {
    try {
      JSON.parse(values.registryAuth);
    } catch {
      issues.set('registry-auth', 'This is not JSON: paste a .dockerconfigjson ({"auths": {…}}).');
    }
  }
  if (values.username.trim() !== '' && values.token === '') issues.set('repository-token', 'A user name needs its token.');
  return issues;
}

interface Props {
  readonly values: SecretValues;
  readonly onChange: (values: SecretValues) => void;
  readonly issues: ReadonlyMap<string, string>;
  /** Which sealing modes to offer (a retry offers the one its run used). @default all */
  readonly modes?: readonly SealingMode[];
  /** Whether to show the repository credentials. @default true */
  readonly credentials?: boolean;
}

function describedBy(id: string, issue: string | undefined): string {
  return `${id}-hint${issue === undefined ? '' : ` ${id}-error`}`;
}

/** A field's hint and, when it has one, its error: the ids its control's aria-describedby names. */
export function FieldNotes({ id, hint, issue }: { id: string; hint: ComponentChildren; issue: string | undefined }) {
  return (
    <>
      <p id={`${id}-hint`} class="hint">
        {hint}
      </p>
      {issue !== undefined && (
        <p id={`${id}-error`} class="field-error">
          {issue}
        </p>
      )}
    </>
  );
}

const MODE_LABELS: Readonly<Record<SealingMode, string>> = {
  certificate: 'The certificate (PEM)',
  'kubeconfig-inline': 'A kubeconfig: the runner waits for the controller and fetches it',
  'kubeconfig-secret': 'A kubeconfig Secret in the service’s cluster',
};

export function SecretFields({ values, onChange, issues, modes = ['certificate', 'kubeconfig-inline', 'kubeconfig-secret'], credentials = true }: Props) {
  const set = (key: keyof SecretValues) => (event: Event) => onChange({ ...values, [key]: (event.currentTarget as HTMLInputElement | HTMLTextAreaElement).value });
  const input = (id: string, key: keyof SecretValues, label: string, hint: string, props: Record<string, unknown> = {}) => {
    const issue = issues.get(id);
    return (
      <div class="field">
        <label for={id}>{label}</label>
        <input id={id} name={key} value={values[key]} onInput={set(key)} aria-describedby={describedBy(id, issue)} aria-invalid={issue === undefined ? undefined : 'true'} autocomplete="off" spellcheck={false} {...props} />
        <FieldNotes id={id} hint={hint} issue={issue} />
      </div>
    );
  };
  const textarea = (id: string, key: keyof SecretValues, label: string, hint: ComponentChildren, rows = 5) => {
    const issue = issues.get(id);
    return (
      <div class="field">
        <label for={id}>{label}</label>
        <textarea id={id} name={key} rows={rows} value={values[key]} onInput={set(key)} spellcheck={false} aria-describedby={describedBy(id, issue)} aria-invalid={issue === undefined ? undefined : 'true'} />
        <FieldNotes id={id} hint={hint} issue={issue} />
      </div>
    );
  };
  const loadCertificate = async (event: Event) => {
    const target = event.currentTarget as HTMLInputElement;
    const file = target.files?.[0];
    if (file === undefined) return;
    onChange({ ...values, certificate: await file.text() });
    target.value = '';
  };

  return (
    <>
      <fieldset>
        <legend>Sealing</legend>
        {modes.length > 1 && (
          <div class="field radio-group" role="radiogroup" aria-labelledby="sealing-mode-label">
            <p id="sealing-mode-label" class="label">
              How the runner gets the cluster’s sealing certificate
            </p>
            {modes.map((mode) => (
              <div class="radio" key={mode}>
                <input type="radio" id={`sealing-mode-${mode}`} name="sealing-mode" value={mode} checked={values.mode === mode} onChange={() => onChange({ ...values, mode })} />
                <label for={`sealing-mode-${mode}`}>{MODE_LABELS[mode]}</label>
              </div>
            ))}
          </div>
        )}
        {values.mode === 'certificate' && (
          <>
            {textarea(
              'sealing-certificate',
              'certificate',
              'Sealing certificate, PEM (required)',
              <>
                The new cluster's Sealed Secrets public certificate (<code>kubeseal --fetch-cert</code>). It is public; steps 4–5 are then skipped.
              </>,
            )}
            <div class="file-field">
              <label for="certificate-file">Or load it from a file</label>
              <input id="certificate-file" type="file" accept=".pem,.crt,.cert,text/plain,application/x-pem-file" onChange={loadCertificate} />
            </div>
          </>
        )}
        {values.mode === 'kubeconfig-inline' && textarea('kubeconfig-inline', 'kubeconfig', 'Kubeconfig (required)', 'The new cluster’s kubeconfig. Sent to the runner for this run only, never stored.', 6)}
        {values.mode === 'kubeconfig-secret' && (
          <div class="field-row">
            {input('kubeconfig-secret-namespace', 'secretNamespace', 'Secret namespace (required)', 'Where the Secret lives in the service’s cluster.')}
            {input('kubeconfig-secret-name', 'secretName', 'Secret name (required)', 'The Secret holding the kubeconfig.')}
            {input('kubeconfig-secret-key', 'secretKey', 'Secret key (required)', 'The key of the kubeconfig in the Secret.')}
          </div>
        )}
      </fieldset>
      <fieldset>
        <legend>Registry and repository access (optional)</legend>
        {textarea('registry-auth', 'registryAuth', 'Registry pull secret (.dockerconfigjson)', 'Your own pull secret instead of a generated one. Sealed into the tree, never stored.', 3)}
        {credentials && (
          <div class="field-row">
            {input('repository-username', 'username', 'Repository user name', 'For an https repository that needs a token.')}
            {input('repository-token', 'token', 'Repository token', 'Used for this run only: passed to the runner, never stored or logged.', { type: 'password' })}
          </div>
        )}
      </fieldset>
    </>
  );
}
