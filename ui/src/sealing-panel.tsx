/**
 * A cluster's SealedSecrets against the certificate its controller serves now:
 * the operator pastes the certificate or the cluster's kubeconfig, the service
 * names the SealedSecrets sealed with another (older) key than the one it
 * serves now. Checked with the kubeconfig, "Rotate these N" starts the rotation
 * (`POST …/rotate`) for exactly those: the cluster's controller re-encrypts them
 * with its newest key, values unchanged, after a confirmation that names the
 * certificate (the controller's as the service fetched it) and each credential;
 * then the run's page. A pasted certificate can say which are stale but cannot
 * rotate them: the controller does that. What is pasted goes into those request bodies only.
 */
import { useAction } from './hooks.js';
import { useEffect, useState } from 'preact/hooks';
import { certificateFacts, type CertificateFacts } from './certificate-facts';
import { ConfirmedAction } from './confirmed-action';
import { ErrorBox } from './components';
import { checkSealing, rotateCredentials, type ClusterCertificateInput, type SealedSecretEntry, type SealingSection } from './fleet-api';
import { formatDateTime } from './format';
import { navigate, paths } from './router';
import { FieldNotes } from './secret-fields';

type Mode = 'certificate' | 'kubeconfig';

function inputOf(mode: Mode, text: string): ClusterCertificateInput {
  return mode === 'certificate' ? { sealing: { certificate: `${text.trim()}\n` } } : { kubeconfig: { inline: text } };
}

/** The SealedSecrets named by `items`; `fullFingerprint` in the rotate confirmation, where the certificate is compared in full. */
function SealedList({ items, testId, fullFingerprint = false }: { items: readonly SealedSecretEntry[]; testId: string; fullFingerprint?: boolean }) {
  return (
    <ul class="upgrade-files" data-testid={testId}>
      {items.map((s) => (
        <li key={`${s.path}/${s.name}`}>
          <code>
            {s.namespace}/{s.name}
          </code>{' '}
          in <code>{s.path}</code>
          {s.sealed_with !== undefined && (
            <span class="sub">
              {fullFingerprint ? (
                <>
                  now sealed with <code>{s.sealed_with}</code>
                </>
              ) : (
                <>
                  sealed with <code>{s.sealed_with.slice(0, 19)}…</code>
                </>
              )}
            </span>
          )}
        </li>
      ))}
    </ul>
  );
}

export function SealingPanel({ name, sealing, generated }: { name: string; sealing: SealingSection; generated: boolean }) {
  const [mode, setMode] = useState<Mode>('certificate');
  const [text, setText] = useState('');
  const [checked, setChecked] = useState<{ section: SealingSection; input: ClusterCertificateInput } | null>(null);
  const { busy, error, run } = useAction();
  const shown = checked?.section ?? sealing;
  const issue =
    text.trim() === ''
      ? undefined
      : mode === 'certificate' && !text.includes('-----BEGIN CERTIFICATE-----')
        ? 'This is not a PEM certificate (-----BEGIN CERTIFICATE-----).'
        : undefined;

  const check = (event: Event) => {
    event.preventDefault();
    const input = inputOf(mode, text);
    void run(async () => {
      const view = await checkSealing(name, input);
      if (view.sealing !== undefined) setChecked({ section: view.sealing, input });
    });
  };
  const rotate = async () => {
    if (checked === null) return;
    const credentials = checked.section.stale.map((s) => `${s.namespace}/${s.name}`);
    navigate(paths.run((await rotateCredentials(name, credentials, checked.input)).id));
  };

  const certificate = shown.controller_certificate;
  return (
    <section class="card" aria-labelledby="cluster-sealing" data-testid="sealing-panel">
      <h2 id="cluster-sealing">Sealed credentials</h2>
      <p role="status">
        {shown.sealed_secrets} SealedSecret(s).{' '}
        {certificate === null ? (
          <span class="muted">Not compared with the controller's certificate yet.</span>
        ) : (
          <>
            Compared with <code>{certificate.fingerprint.slice(0, 19)}…</code> (valid until {formatDateTime(certificate.not_after)}): {shown.stale.length}{' '}
            sealed with an older certificate, {shown.current_count ?? 0} current.
          </>
        )}
      </p>
      {checked !== null && certificate === null && shown.reason !== undefined && <p class="field-error">{shown.reason}</p>}
      {shown.stale.length > 0 && (
        <>
          <h3>Sealed with an older certificate</h3>
          <SealedList items={shown.stale} testId="sealing-stale" />
          <div class="run-actions">
            <p class="hint">
              Stale only means not sealed with the controller’s newest key: it keeps its older keys, so the cluster still decrypts these while it holds theirs.
              A rotation moves them to the newest key with the same values, re-encrypted by the controller (a rotate run:{' '}
              <code>POST /api/v1/clusters/{name}/rotate</code>, or offline{' '}
              <code>generate-gitops-env rotate --cluster {name} --cert FILE --recovery-private-key OLD_KEY</code>).
            </p>
            {generated && checked !== null && !('kubeconfig' in checked.input) && (
              <p class="hint" data-testid="rotate-needs-kubeconfig">
                To rotate them from here, check with the cluster’s kubeconfig: its controller re-encrypts them.
              </p>
            )}
            {generated && checked !== null && 'kubeconfig' in checked.input && (
              <ConfirmedAction
                id="rotate-question"
                testId="rotate-action"
                tone="primary"
                label={`Rotate these ${shown.stale.length}…`}
                question={`Re-encrypt ${shown.stale.length} credential(s) of ${name} with the controller’s newest key, keeping their values?`}
                details={<RotateDetails input={checked.input} section={checked.section} />}
                yes={`Yes, rotate ${shown.stale.length}`}
                busy="Starting the rotation…"
                keep="Not now"
                failure="Could not start the rotation"
                disabled={busy}
                act={rotate}
              />
            )}
          </div>
        </>
      )}
      {shown.unknown.length > 0 && (
        <>
          <h3>Recording no certificate</h3>
          <SealedList items={shown.unknown} testId="sealing-unknown" />
          <p class="hint">Sealed by hand or by an older generator: nothing says which key sealed them.</p>
        </>
      )}
      <form onSubmit={check}>
        <div class="field radio-group" role="radiogroup" aria-labelledby="sealing-check-mode">
          <p id="sealing-check-mode" class="label">
            Compare with the certificate the controller serves now
          </p>
          {(['certificate', 'kubeconfig'] as const).map((m) => (
            <div class="radio" key={m}>
              <input type="radio" id={`sealing-check-${m}`} name="sealing-check-mode" value={m} checked={mode === m} onChange={() => setMode(m)} />
              <label for={`sealing-check-${m}`}>
                {m === 'certificate' ? 'The certificate (PEM)' : 'The cluster’s kubeconfig: the service asks the controller'}
              </label>
            </div>
          ))}
        </div>
        <div class="field">
          <label for="sealing-check-input">{mode === 'certificate' ? 'Certificate (kubeseal --fetch-cert)' : 'Kubeconfig'}</label>
          <textarea
            id="sealing-check-input"
            rows={5}
            value={text}
            spellcheck={false}
            onInput={(event) => setText((event.currentTarget as HTMLTextAreaElement).value)}
            aria-describedby={`sealing-check-input-hint${issue === undefined ? '' : ' sealing-check-input-error'}`}
            aria-invalid={issue === undefined ? undefined : 'true'}
          />
          <FieldNotes id="sealing-check-input" hint="Sent for this check (and a rotation started from it) only; never stored." issue={issue} />
        </div>
        <button type="submit" disabled={busy || text.trim() === '' || issue !== undefined}>
          {busy ? 'Checking…' : 'Check'}
        </button>
      </form>
      {error !== null && <ErrorBox title="The check or the rotation failed" error={error} />}
    </section>
  );
}

/**
 * What a rotation would do, for its confirmation: the certificate (from the
 * pasted PEM, computed here; or the controller's, as the service fetched it)
 * and each credential resealed, with the certificate it is sealed with now.
 */
function RotateDetails({ input, section }: { input: ClusterCertificateInput; section: SealingSection }) {
  const pem = 'sealing' in input ? input.sealing.certificate : undefined;
  const [facts, setFacts] = useState<CertificateFacts | null | 'reading'>(pem === undefined ? null : 'reading');
  useEffect(() => {
    if (pem === undefined) return;
    let live = true;
    certificateFacts(pem).then(
      (read) => live && setFacts(read),
      () => live && setFacts(null),
    );
    return () => {
      live = false;
    };
  }, [pem]);
  const served = section.controller_certificate;
  const fingerprint = facts !== null && facts !== 'reading' ? facts.fingerprint : served?.fingerprint;
  const notAfter = facts !== null && facts !== 'reading' ? facts.notAfter : served === null ? undefined : new Date(served.not_after);
  const notBefore = facts !== null && facts !== 'reading' ? facts.notBefore : undefined;
  const now = Date.now();
  return (
    <div class="rotate-details" data-testid="rotate-details">
      {facts === 'reading' ? (
        <p role="status">Reading the certificate…</p>
      ) : (
        <dl class="facts">
          <dt>Certificate ({pem === undefined ? 'served by the controller' : 'pasted'})</dt>
          <dd>
            SHA-256 <code data-testid="rotate-fingerprint">{fingerprint ?? 'unknown'}</code>
          </dd>
          <dt>Valid</dt>
          <dd data-testid="rotate-validity">
            {notBefore === undefined ? '' : `from ${formatDateTime(notBefore.toISOString())} `}
            {notAfter === undefined ? 'unknown' : `until ${formatDateTime(notAfter.toISOString())}`}
            {notAfter !== undefined && notAfter.getTime() < now && <strong> (expired)</strong>}
            {notBefore !== undefined && notBefore.getTime() > now && <strong> (not valid yet)</strong>}
          </dd>
        </dl>
      )}
      <p>Re-encrypted by the cluster’s Sealed Secrets controller with the key of this certificate, the values unchanged (nothing that reads them notices):</p>
      <SealedList items={section.stale} testId="rotate-credentials" fullFingerprint />
      <p class="hint">
        The controller re-encrypts only what one of its keys opens: one sealed with a key it no longer holds fails the run, named, and needs its old key or
        fresh values.
      </p>
    </div>
  );
}
