import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ValidationError } from '../errors.js';
import { platformDir } from '../package-paths.js';
import { parsePlatformDescriptor } from './platform-descriptor.js';

const HEADER = 'apiVersion: gitops-scaffolder.io/v1alpha1\nkind: Platform\n';

/** Asserts that parsing fails with a ValidationError whose message matches `message`; returns its issues. */
function rejects(text: string, message: RegExp): ValidationError {
  let caught: unknown;
  try {
    parsePlatformDescriptor(text);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof ValidationError, `expected a ValidationError, got ${String(caught)}`);
  assert.match(caught.message, message);
  return caught;
}

const credential = (name: string, keys: string, extra = '') =>
  `  - name: ${name}\n    namespace: database\n    layer: database\n${extra}    keys:\n${keys}`;

describe('parsePlatformDescriptor', () => {
  it('reads the shipped scaffold.yaml: four credentials, defaults filled in', () => {
    const descriptor = parsePlatformDescriptor(readFileSync(join(platformDir(), 'scaffold.yaml'), 'utf8'));
    assert.deepEqual(
      descriptor.credentials.map((c) => `${c.layer}:${c.namespace}/${c.name}`),
      ['database:database/postgresql-credentials', 'database:database/rabbitmq-credentials', 'apps:tcr/tcr-database', 'apps:tcr/registry-pull-secret'],
    );
    assert.deepEqual(descriptor.credentials[1]!.keys['rabbitmq-erlang-cookie'], { generate: 'alphanumeric', length: 64 });
    assert.deepEqual(descriptor.credentials[2]!.keys.DATABASE_PASSWORD, { sameAs: 'database/postgresql-credentials/password' });
    assert.equal(descriptor.credentials[3]!.suppliedBy, 'registry-auth');
    assert.deepEqual(descriptor.credentials[3]!.keys['.dockerconfigjson'], {
      generate: 'dockerconfigjson',
      registry: 'registry.${cluster_domain}',
      username: 'tcr-pull',
      length: 32,
    });
  });

  it('treats a missing descriptor as no credentials', () => {
    assert.deepEqual(parsePlatformDescriptor(undefined).credentials, []);
  });

  it('defaults a password to 32 characters and the type to Opaque', () => {
    const descriptor = parsePlatformDescriptor(`${HEADER}credentials:\n${credential('pg', '      password: { generate: password }\n')}`);
    assert.deepEqual(descriptor.credentials[0]!.keys.password, { generate: 'password', length: 32 });
    assert.equal(descriptor.credentials[0]!.type, 'Opaque');
  });

  it('rejects a credential listed twice', () => {
    const keys = '      password: { generate: password }\n';
    rejects(`${HEADER}credentials:\n${credential('pg', keys)}\n${credential('pg', keys)}`, /^scaffold\.yaml: credential database\/pg is listed twice$/);
  });

  it('rejects sameAs naming a credential that does not exist, naming the key', () => {
    const error = rejects(
      `${HEADER}credentials:\n${credential('app', '      DATABASE_PASSWORD: { sameAs: database/missing/password }\n')}`,
      /sameAs database\/missing\/password must name a generated key of another credential/,
    );
    assert.equal(error.issues[0]!.field, 'scaffold.yaml.credentials.database/app.DATABASE_PASSWORD');
  });

  it('rejects sameAs naming a key the other credential does not have', () => {
    rejects(
      `${HEADER}credentials:\n${credential('pg', '      password: { generate: password }\n')}\n${credential('app', '      p: { sameAs: database/pg/other }\n')}`,
      /sameAs database\/pg\/other must name a generated key/,
    );
  });

  it('rejects sameAs pointing at another sameAs (no chains)', () => {
    rejects(
      `${HEADER}credentials:\n${credential('pg', '      password: { generate: password }\n')}\n${credential('a', '      p: { sameAs: database/pg/password }\n')}\n${credential('b', '      p: { sameAs: database/a/p }\n')}`,
      /sameAs database\/a\/p must name a generated key/,
    );
  });

  it('rejects an unknown field, naming it (a typo must not pass silently)', () => {
    const error = rejects(`${HEADER}credentials:\n${credential('pg', '      password: { generate: password }\n', '    typ: Opaque\n')}`, /unknown field\(s\): typ/);
    assert.equal(error.issues[0]!.field, 'scaffold.yaml.credentials.0');
    rejects(`${HEADER}credential: []\n`, /^scaffold\.yaml: unknown field\(s\): credential$/);
  });

  it('rejects an unknown generator and a password too short to be one', () => {
    rejects(`${HEADER}credentials:\n${credential('pg', '      password: { generate: uuid }\n')}`, /scaffold\.yaml\.credentials\.0\.keys\.password/);
    rejects(`${HEADER}credentials:\n${credential('pg', '      password: { generate: password, length: 8 }\n')}`, /scaffold\.yaml\.credentials\.0\.keys\.password/);
  });

  it('rejects a credential name that is not a DNS label and a credential with no keys', () => {
    rejects(`${HEADER}credentials:\n  - name: ../pg\n    namespace: database\n    layer: database\n    keys: { p: { generate: password } }\n`, /scaffold\.yaml\.credentials\.0\.name: must be a DNS-1123 label/);
    rejects(`${HEADER}credentials:\n  - name: pg\n    namespace: database\n    layer: database\n    keys: {}\n`, /scaffold\.yaml\.credentials\.0\.keys: must list at least one key/);
  });

  it('rejects the wrong apiVersion or kind, and malformed YAML', () => {
    rejects('apiVersion: v1\nkind: Platform\n', /scaffold\.yaml\.apiVersion/);
    rejects('apiVersion: gitops-scaffolder.io/v1alpha1\nkind: Cluster\n', /scaffold\.yaml\.kind/);
    rejects(`${HEADER}credentials: [\n`, /^scaffold\.yaml: invalid YAML/);
  });
});
