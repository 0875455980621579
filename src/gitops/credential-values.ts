/**
 * Produces the plaintext values of one credential. Plaintext lives only in
 * memory between here and the sealing step; nothing here logs or returns it
 * anywhere else.
 */
import { ValidationError } from '../errors.js';
import type { CredentialSpec, ValueSource } from './platform-descriptor.js';
import { randomString, type RandomBytes } from './random-string.js';

/** The kinds of caller-supplied values a credential key can take (`{ supplied: … }`). */
export type SuppliedKind = Extract<ValueSource, { supplied: string }>['supplied'];

/** Values already produced in this render, by `namespace/name/key`, for `sameAs`. */
export type ProducedValues = Map<string, string>;

function generated(source: Extract<ValueSource, { generate: string }>, random: RandomBytes): string {
  return randomString(random, source.length);
}

/**
 * Checks a caller-supplied `.dockerconfigjson` the way a kubelet will use it,
 * without echoing any of it: an `auths` object with at least one registry,
 * each with credentials (`auth` as base64 of "user:password", or `username`
 * and `password`). `{"auths":{}}` would seal a pull secret that pulls nothing.
 *
 * @throws ValidationError naming what is missing
 */
export function assertDockerConfigJson(text: string, field = 'registry_pull_secret'): string {
  const refuse = (message: string): ValidationError => new ValidationError([{ field, message }]);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw refuse('is not valid JSON (expected a .dockerconfigjson document)');
  }
  const auths = (parsed as { auths?: unknown } | null)?.auths;
  if (typeof auths !== 'object' || auths === null || Array.isArray(auths) || Object.keys(auths).length === 0) {
    throw refuse('must be a .dockerconfigjson document with a non-empty "auths" object');
  }
  Object.entries(auths as Record<string, unknown>).forEach(([registry, entry], index) => {
    // Registries are named by index: a key could be anything, even a pasted secret.
    if (registry.trim() === '') throw refuse(`auths entry #${index + 1} names no registry`);
    const { auth, username, password } = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>;
    if (typeof auth === 'string' && auth !== '') {
      const decoded = /^[A-Za-z0-9+/]+={0,2}$/.test(auth) ? Buffer.from(auth, 'base64').toString('utf8') : '';
      if (!/^[^:]+:.+$/s.test(decoded)) throw refuse(`auths entry #${index + 1}: "auth" must be base64 of "username:password"`);
    } else if (typeof username !== 'string' || username === '' || typeof password !== 'string' || password === '') {
      throw refuse(`auths entry #${index + 1} has no credentials ("auth", or "username" and "password")`);
    }
  });
  return text;
}

/**
 * The plaintext data of `credential`, in key order. `sameAs` keys take the value
 * produced earlier in `produced`, `supplied` keys the caller's `supplied`; every
 * value produced is recorded there.
 */
export function credentialValues(
  credential: CredentialSpec,
  options: {
    random: RandomBytes;
    produced: ProducedValues;
    /** The caller's value: one string (every supplied key of this credential), or one per supplied kind. */
    supplied?: string | Readonly<Partial<Record<SuppliedKind, string>>>;
  },
): Record<string, string> {
  const data: Record<string, string> = {};
  for (const [key, source] of Object.entries(credential.keys)) {
    let value: string;
    if ('supplied' in source) {
      // Never generated: the caller omits an unsupplied registry credential before it gets here.
      const given = typeof options.supplied === 'string' ? options.supplied : options.supplied?.[source.supplied];
      if (given === undefined)
        throw new Error(`${credential.namespace}/${credential.name}/${key} is supplied by the caller (${source.supplied}), never generated`);
      value = given;
    } else if ('sameAs' in source) {
      const other = options.produced.get(source.sameAs);
      if (other === undefined) throw new Error(`sameAs ${source.sameAs} was not produced before ${credential.namespace}/${credential.name}`);
      value = other;
    } else {
      value = generated(source, options.random);
    }
    data[key] = value;
    options.produced.set(`${credential.namespace}/${credential.name}/${key}`, value);
  }
  return data;
}
