/**
 * The scope rule against the consumer it predicts: for any SealedSecret the
 * generator seals, moved to any namespace/name by a transform, verify calls it
 * mis-scoped exactly when decrypting with the label of its applied metadata
 * (what the controller does) fails.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { scopeLabel, SEALING_SCOPES } from '../sealing/seal.js';
import { buildSealedSecret, scopeOfSealedSecret } from '../sealing/sealed-secret.js';
import { parseSealingCertificate } from '../sealing/sealing-certificate.js';
import { createTestCertificate } from '../sealing/test-certificate.js';
import { unsealValue } from '../sealing/unseal.js';
import { scopeMismatch } from './sealed-secret-scope.js';

const controller = createTestCertificate();
const certificate = parseSealingCertificate(controller.certificatePem);

/** Whether the controller, reading the applied metadata, can decrypt every value. */
function controllerUnseals(object: ReturnType<typeof buildSealedSecret>): boolean {
  const label = scopeLabel(scopeOfSealedSecret(object), object.metadata.namespace, object.metadata.name);
  try {
    for (const ciphertext of Object.values(object.spec.encryptedData)) unsealValue({ privateKey: controller.privateKey, label, ciphertext });
    return true;
  } catch {
    return false;
  }
}

const label = fc.constantFrom('tcr', 'database', 'queue', 'x-tcr', 'db');

describe('scopeMismatch', () => {
  it('reports a mismatch exactly when the controller cannot unseal the built object', () => {
    fc.assert(
      fc.property(fc.constantFrom(...SEALING_SCOPES), label, label, label, label, (scope, namespace, name, builtNamespace, builtName) => {
        const sealed = buildSealedSecret({ name, namespace, scope, data: { token: 's3cret' }, certificate });
        // What a namespace transform / namePrefix (or a hand edit) does: the metadata moves, the template stays.
        const built = { ...sealed, metadata: { ...sealed.metadata, namespace: builtNamespace, name: builtName } };
        const mismatch = scopeMismatch(built as unknown as Record<string, unknown>, builtNamespace);
        assert.equal(mismatch === undefined, controllerUnseals(built), JSON.stringify({ scope, namespace, name, builtNamespace, builtName, mismatch }));
      }),
      { numRuns: 150 },
    );
  });
});
