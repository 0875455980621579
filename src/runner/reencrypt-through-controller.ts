/**
 * Rotation with the SAME values, in a run: each chosen SealedSecret of the
 * working copy is sent to the cluster's own Sealed Secrets controller
 * (`/v1/rotate`, through the API server's service proxy), which decrypts it
 * with whichever key it holds and seals the same values with its newest key.
 * The file gets the new ciphertext and the certificate it is now sealed for;
 * then the sealing pass renders, and keeps sealed files as they are. The runner
 * sends and receives ciphertext only, and no database sees a new password.
 *
 * Which ones by default: those not sealed with the certificate the controller
 * serves now (their `sealed-with` annotation names another, or none). That is
 * not "broken": the controller keeps every key it generated (a renewal adds
 * one, `--key-renew-period`, 30 days by default), so one sealed with an older
 * key still decrypts, and rotating it only moves it to the newest key. One
 * sealed with a key the controller no longer holds cannot be re-encrypted here
 * (the controller answers 500) and fails the run, naming it.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CredentialRotation } from '../gitops/sealed-credentials.js';
import { rotateCredentials } from '../gitops/rotate-credentials.js';
import type { Logger } from '../logger.js';
import type { GitWorkspace, SealingCertificateSource, SealingControllerRef } from '../run/ports.js';
import type { SealingCertificate } from '../sealing/sealing-certificate.js';

/** What {@link reencryptThroughController} works with. */
export interface ControllerReencryptDeps {
  readonly workspace: Pick<GitWorkspace, 'dir' | 'reader'>;
  readonly source: SealingCertificateSource;
  readonly controller: SealingControllerRef;
  readonly log: Logger;
  readonly generatorVersion: string;
  readonly signal?: AbortSignal;
}

/**
 * Re-encrypts the cluster's chosen SealedSecrets in the working copy through its controller.
 * @param input.certificate what the controller serves now (its newest key's), recorded on each rewritten file
 * @param input.rotate `true`: every credential not sealed with `certificate`; or the ones named
 * @throws ConflictError when the controller holds no key that opens one
 * @throws UnavailableError when the controller cannot be reached (the message names the API server)
 */
export async function reencryptThroughController(
  deps: ControllerReencryptDeps,
  input: { readonly cluster: string; readonly certificate: SealingCertificate; readonly rotate: Exclude<CredentialRotation, false> },
): Promise<void> {
  const { controller, log } = deps;
  const plan = await rotateCredentials(deps.workspace.reader(), {
    cluster: input.cluster,
    certificate: input.certificate,
    ...(input.rotate === true ? {} : { credentials: input.rotate }),
    values: { controller: { reencrypt: (sealed) => deps.source.reencrypt(controller, sealed, deps.signal ? { signal: deps.signal } : {}) } },
    generatorVersion: deps.generatorVersion,
  });
  for (const [path, text] of plan.files) await writeFile(join(deps.workspace.dir, path), text);
  for (const r of plan.rotated) {
    log.info(
      { event: 'credential', namespace: r.namespace, name: r.name, action: 'reencrypted', values: 'same', file: `${plan.gitopsPath}/${r.file}` },
      `credential ${r.namespace}/${r.name} re-encrypted by ${controller.namespace}/${controller.name} with its newest key (same values)`,
    );
  }
  if (plan.rotated.length === 0) {
    log.info(
      { event: 'note' },
      `every credential of ${plan.gitopsPath} is sealed with the certificate ${controller.namespace}/${controller.name} serves now: nothing to re-encrypt`,
    );
  }
  if (plan.remaining.length > 0) {
    // Sealed by hand (not scaffold.yaml's), or not named: still decryptable while the controller holds their key.
    log.info(
      { event: 'note', remaining: plan.remaining.map((r) => `${r.namespace}/${r.name}`) },
      `${plan.remaining.length} SealedSecret(s) of ${plan.gitopsPath} stay sealed with an older key (not rotated by this run): ${plan.remaining.map((r) => `${r.namespace}/${r.name}`).join(', ')}`,
    );
  }
}
