/**
 * A rotation run as the dashboard shows it: a scaffold run started to rotate
 * credentials gets its own badge and title, and its page lists the credentials
 * it resealed, folded from the runner's `credential` log events.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resealedCredentialsOf } from '../../ui/src/resealed-credentials.js';
import { runHeading, shownActionLabel, shownActionOf } from '../../ui/src/run-action-view.js';

const cluster = { name: 'eu-prod-1' };
/** A log entry as log-events.ts reads a runner line: a `credential` event carries its credential. */
const line = (object: { event: string; namespace?: string; name?: string; action?: string; values?: string; file?: string; msg?: string }) =>
  object.event === 'credential' && object.namespace !== undefined && object.name !== undefined && object.action !== undefined
    ? { credential: { namespace: object.namespace, name: object.name, action: object.action, ...(object.file === undefined ? {} : { file: object.file }) } }
    : {};

describe('a rotation run', () => {
  it('is shown as a rotation, not a scaffold, in the run list and on its page; other runs keep their action', () => {
    assert.equal(shownActionOf({ action: 'scaffold', rotation: 'same' }), 'rotate');
    assert.equal(shownActionOf({ action: 'scaffold', rotation: 'fresh' }), 'rotate');
    assert.equal(shownActionOf({ action: 'scaffold', rotation: null }), 'scaffold');
    assert.equal(shownActionOf({ action: 'upgrade', rotation: null }), 'upgrade');
    assert.deepEqual(shownActionLabel('rotate'), { noun: 'rotation', icon: '⟳' });
    assert.equal(shownActionLabel('remove').noun, 'removal');
    assert.equal(runHeading({ action: 'scaffold', rotation: 'same', cluster }), 'Rotation of eu-prod-1');
    assert.equal(runHeading({ action: 'scaffold', rotation: null, cluster }), 'Scaffold of eu-prod-1');
  });

  it('lists each credential it resealed once, with its file and whether the value is the same or fresh, and not the ones it kept', () => {
    const entries = [
      line({ event: 'credential', namespace: 'database', name: 'postgresql-credentials', action: 'kept', file: 'clusters/c/database/sealed/a.yaml' }),
      line({
        event: 'credential',
        namespace: 'database',
        name: 'rabbitmq-credentials',
        action: 'reencrypted',
        values: 'same',
        file: 'clusters/c/database/sealed/sealed-rabbitmq-credentials.yaml',
      }),
      line({ event: 'credential', namespace: 'apps', name: 'tcr-database', action: 'generated', file: 'clusters/c/apps/sealed/tcr.yaml' }),
      // The second pass reports it again: listed once.
      line({ event: 'credential', namespace: 'apps', name: 'tcr-database', action: 'generated', file: 'clusters/c/apps/sealed/tcr.yaml' }),
      line({ event: 'note', msg: 'not a credential' }),
    ];
    assert.deepEqual(resealedCredentialsOf(entries), [
      { credential: 'apps/tcr-database', how: 'fresh value', file: 'clusters/c/apps/sealed/tcr.yaml' },
      {
        credential: 'database/rabbitmq-credentials',
        how: "same value, re-encrypted by the cluster's controller",
        file: 'clusters/c/database/sealed/sealed-rabbitmq-credentials.yaml',
      },
    ]);
    assert.deepEqual(resealedCredentialsOf([]), []);
  });
});
