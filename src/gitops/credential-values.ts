/**
 * Produces the plaintext values of one credential. Plaintext lives only in
 * memory between here and the sealing step; nothing here logs or returns it
 * anywhere else.
 */
import { ValidationError } from '../errors.js';
import type { CredentialSpec, ValueSource } from './platform-descriptor.js';
import { randomString, type RandomBytes } from './random-string.js';

/** Values already produced in this render, by `namespace/name/key`, for `sameAs`. */
export type ProducedValues = Map<string, string>;

/** Replaces `${cluster_*}` in descriptor strings such as `registry.${cluster_domain}`. */
function expandIdentity(text: string, identity: { name: string; domain: string; region: string }): string {
  return text
    .replaceAll('${cluster_name}', identity.name)
    .replaceAll('${cluster_domain}', identity.domain)
    .replaceAll('${cluster_region}', identity.region);
}

function generated(source: Exclude<ValueSource, { sameAs: string }>, random: RandomBytes, identity: { name: string; domain: string; region: string }): string {
  switch (source.generate) {
    case 'password':
    case 'alphanumeric':
      return randomString(random, source.length);
    case 'dockerconfigjson': {
      const registry = expandIdentity(source.registry, identity);
      const password = randomString(random, source.length);
      const auth = Buffer.from(`${source.username}:${password}`).toString('base64');
      return JSON.stringify({ auths: { [registry]: { username: source.username, password, auth } } });
    }
  }
}

/**
 * Checks a caller-supplied `.dockerconfigjson` without echoing any of it.
 * @throws ValidationError when it is not a docker config with an `auths` object
 */
export function assertDockerConfigJson(text: string, field = 'registry_pull_secret'): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ValidationError([{ field, message: 'is not valid JSON (expected a .dockerconfigjson document)' }]);
  }
  const auths = (parsed as { auths?: unknown } | null)?.auths;
  if (typeof auths !== 'object' || auths === null || Array.isArray(auths) || Object.keys(auths).length === 0) {
    throw new ValidationError([{ field, message: 'must be a .dockerconfigjson document with a non-empty "auths" object' }]);
  }
  return text;
}

/**
 * The plaintext data of `credential`, in key order. `sameAs` keys take the value
 * produced earlier in `produced`; every value produced is recorded there.
 */
export function credentialValues(
  credential: CredentialSpec,
  options: {
    random: RandomBytes;
    identity: { name: string; domain: string; region: string };
    produced: ProducedValues;
    supplied?: string;
  },
): Record<string, string> {
  const data: Record<string, string> = {};
  for (const [key, source] of Object.entries(credential.keys)) {
    let value: string;
    if (options.supplied !== undefined) {
      value = options.supplied;
    } else if ('sameAs' in source) {
      const other = options.produced.get(source.sameAs);
      if (other === undefined) throw new Error(`sameAs ${source.sameAs} was not produced before ${credential.namespace}/${credential.name}`);
      value = other;
    } else {
      value = generated(source, options.random, options.identity);
    }
    data[key] = value;
    options.produced.set(`${credential.namespace}/${credential.name}/${key}`, value);
  }
  return data;
}
