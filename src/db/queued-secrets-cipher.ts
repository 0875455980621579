/**
 * A queued run's secrets as the store holds them: AES-256-GCM under a key
 * derived (HKDF-SHA256) from the service's queue key, bound to the run's id
 * as associated data, so the database never holds a credential in the clear
 * and a sealed value copied onto another run's row does not open.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { RunSecrets } from '../run/run-record.js';

const VERSION = 'v1';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
// Its own label: the same queue key also signs landing-queue commits (git/queue-auth.ts), a different use.
const INFO = 'gitops-scaffolder queued run secrets v1';

/** Seals and opens queued runs' secrets. */
export class QueuedSecretsCipher {
  readonly #key: Buffer;

  /** @param queueKey - the service's queue key (`SCAFFOLD_QUEUE_KEY` or `DATA_DIR/queue-key`), shared by every replica */
  constructor(queueKey: string) {
    this.#key = Buffer.from(hkdfSync('sha256', Buffer.from(queueKey, 'utf8'), Buffer.alloc(0), INFO, 32));
  }

  seal(runId: string, secrets: RunSecrets): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, nonce);
    cipher.setAAD(Buffer.from(runId, 'utf8'));
    const body = Buffer.concat([cipher.update(JSON.stringify(secrets), 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${VERSION}.${nonce.toString('base64url')}.${body.toString('base64url')}`;
  }

  /**
   * @throws Error (naming no secret) when the value was sealed under another key, for another run, or altered
   */
  open(runId: string, sealed: string): RunSecrets {
    const [version, nonce, body] = sealed.split('.');
    if (version !== VERSION || nonce === undefined || body === undefined) throw new Error('queued secrets are not in a known format');
    const bytes = Buffer.from(body, 'base64url');
    if (bytes.length < TAG_BYTES) throw new Error('queued secrets are truncated');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(nonce, 'base64url'));
      decipher.setAAD(Buffer.from(runId, 'utf8'));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      const text = Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
      return JSON.parse(text) as RunSecrets;
    } catch {
      throw new Error('queued secrets do not open with this queue key (another key, another run, or altered)');
    }
  }
}
