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
import type { SealingMode, SecretValues } from './secret-values';

export { clearedSecrets, EMPTY_SECRETS, SECRET_FIELDS, secretIssues, secretsRequest, type SealingMode, type SecretValues } from './secret-values';

interface Props {
  readonly values: SecretValues;
  readonly onChange: (values: SecretValues) => void;
  readonly issues: ReadonlyMap<string, string>;
  /** Which sealing modes to offer (a retry offers the one its run used). @default all */
  readonly modes?: readonly SealingMode[];
  /** Whether to show the repository credentials. @default true */
  readonly credentials?: boolean;
  /** Whether to offer a GitHub App (pull_request delivery on GitHub). @default false */
  readonly githubApp?: boolean;
}

/** The ids a control's aria-describedby names: its hint and, when it has one, its error. */
export function describedBy(id: string, issue: string | undefined): string {
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
  none: 'None: the run seals nothing',
};

export function SecretFields({
  values,
  onChange,
  issues,
  modes = ['certificate', 'kubeconfig-inline', 'kubeconfig-secret'],
  credentials = true,
  githubApp = false,
}: Props) {
  const set = (key: keyof SecretValues) => (event: Event) =>
    onChange({ ...values, [key]: (event.currentTarget as HTMLInputElement | HTMLTextAreaElement).value });
  const input = (id: string, key: keyof SecretValues, label: string, hint: string, props: Record<string, unknown> = {}) => {
    const issue = issues.get(id);
    return (
      <div class="field">
        <label for={id}>{label}</label>
        <input
          id={id}
          name={key}
          value={values[key]}
          onInput={set(key)}
          aria-describedby={describedBy(id, issue)}
          aria-invalid={issue === undefined ? undefined : 'true'}
          autocomplete="off"
          spellcheck={false}
          {...props}
        />
        <FieldNotes id={id} hint={hint} issue={issue} />
      </div>
    );
  };
  const textarea = (id: string, key: keyof SecretValues, label: string, hint: ComponentChildren, rows = 5) => {
    const issue = issues.get(id);
    return (
      <div class="field">
        <label for={id}>{label}</label>
        <textarea
          id={id}
          name={key}
          rows={rows}
          value={values[key]}
          onInput={set(key)}
          spellcheck={false}
          aria-describedby={describedBy(id, issue)}
          aria-invalid={issue === undefined ? undefined : 'true'}
        />
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

  // An upgrade's or a removal's retry seals nothing: no certificate, kubeconfig or registry pull secret to ask for.
  const seals = values.mode !== 'none';
  return (
    <>
      {seals && (
        <fieldset>
          <legend>Sealing</legend>
          {modes.length > 1 && (
            <div class="field radio-group" role="radiogroup" aria-labelledby="sealing-mode-label">
              <p id="sealing-mode-label" class="label">
                How the runner gets the cluster’s sealing certificate
              </p>
              {modes.map((mode) => (
                <div class="radio" key={mode}>
                  <input
                    type="radio"
                    id={`sealing-mode-${mode}`}
                    name="sealing-mode"
                    value={mode}
                    checked={values.mode === mode}
                    onChange={() => onChange({ ...values, mode })}
                  />
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
          {values.mode === 'kubeconfig-inline' &&
            textarea(
              'kubeconfig-inline',
              'kubeconfig',
              'Kubeconfig (required)',
              'The new cluster’s kubeconfig. Sent to the runner for this run only, never stored.',
              6,
            )}
          {values.mode === 'kubeconfig-secret' && (
            <div class="field-row">
              {input('kubeconfig-secret-namespace', 'secretNamespace', 'Secret namespace (required)', 'Where the Secret lives in the service’s cluster.')}
              {input('kubeconfig-secret-name', 'secretName', 'Secret name (required)', 'The Secret holding the kubeconfig.')}
              {input('kubeconfig-secret-key', 'secretKey', 'Secret key (required)', 'The key of the kubeconfig in the Secret.')}
            </div>
          )}
        </fieldset>
      )}
      <fieldset>
        <legend>{seals ? 'Registry and repository access (optional)' : 'Repository access (optional)'}</legend>
        {seals &&
          textarea(
            'registry-auth',
            'registryAuth',
            'Registry pull secret (.dockerconfigjson)',
            'Your registry pull secret, sealed into the tree as given, never stored. Empty: none is written and images are pulled anonymously.',
            3,
          )}
        {credentials && (
          <div class="field-row">
            {input('repository-username', 'username', 'Repository user name', 'For an https repository that needs a token.')}
            {input('repository-token', 'token', 'Repository token', 'Used for this run only: passed to the runner, never stored or logged.', {
              type: 'password',
            })}
          </div>
        )}
      </fieldset>
      {credentials && githubApp && (
        <fieldset data-testid="github-app-fields">
          <legend>GitHub App (optional, instead of or beside the token)</legend>
          <p class="hint">
            An App installed on the repository: the runner mints an installation token with it for the pull requests and for git. Used for this run only, never
            stored or logged.
          </p>
          <div class="field-row">
            {input('github-app-id', 'appId', 'GitHub App id', 'The number on the App’s settings page (“App ID”).', { inputMode: 'numeric' })}
            {input('github-app-installation-id', 'installationId', 'Installation id', 'The number at the end of the installation’s settings URL.', {
              inputMode: 'numeric',
            })}
          </div>
          {textarea('github-app-private-key', 'appPrivateKey', 'GitHub App private key (PEM)', 'The whole .pem file GitHub gave you for the App.', 4)}
        </fieldset>
      )}
    </>
  );
}
