/**
 * The password-change Job's script, run by a real POSIX shell (dash here, as
 * busybox sh in the Job's image) against a kubectl double that plays the
 * cluster: the SealedSecret's ciphertexts and status, the Secret the
 * controller writes, and the database behind `kubectl exec`. What must hold is
 * what a live rotation needs: the password set is this rotation's, read after
 * the controller unsealed it, and any failure fails the pod (which is retried)
 * rather than completing the Job with a login broken.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { passwordChangeManifest, type PasswordChangeInput } from './password-change-job.js';

// The double: `get sealedsecret … jsonpath={.spec.encryptedData.K}`, `… jsonpath={.metadata.generation}/…`,
// `get secret … jsonpath={.data.K}` read files of the state directory; `exec` records its arguments and
// stdin and exits with `exec-exit`. Every call is logged.
const KUBECTL = `#!/bin/sh
S="$FAKE_STATE"
printf '%s\\n' "$*" >> "$S/calls"
case "$1" in
  get)
    jp="\${7#jsonpath=}"
    case "$2:$jp" in
      'sealedsecret:{.spec.encryptedData.'*) key="\${jp#\\{.spec.encryptedData.}"; cat "$S/sealed-\${key%\\}}" 2>/dev/null ;;
      'sealedsecret:{.metadata.generation}'*) tr / ' ' < "$S/status" ;;
      'secret:{.data.'*)
        if [ -f "$S/secret-fails" ]; then echo 'error: the server is currently unable to handle the request' >&2; exit 1; fi
        key="\${jp#\\{.data.}"; cat "$S/secret-\${key%\\}}" 2>/dev/null ;;
      *) echo "double: unexpected get $*" >&2; exit 2 ;;
    esac ;;
  exec)
    printf '%s\\n' "$*" >> "$S/exec-args"
    cat >> "$S/exec-stdin"
    exit "$(cat "$S/exec-exit" 2>/dev/null || echo 0)" ;;
  *) echo "double: unexpected $*" >&2; exit 2 ;;
esac
`;
// Each sleep is a tick of the cluster: it runs tick-N (a shell snippet changing the state) if there is one.
const SLEEP = `#!/bin/sh
S="$FAKE_STATE"
n=$(( $(cat "$S/sleeps" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$S/sleeps"
[ "$n" -le 20 ] || { echo 'double: waited too long' >&2; exit 3; }
[ ! -f "$S/tick-$n" ] || . "$S/tick-$n"
`;

const NEW_CIPHERTEXT = 'AgB-new-ciphertext==';
const b64 = (text: string) => Buffer.from(text).toString('base64');

function input(engine: 'postgresql' | 'rabbitmq'): PasswordChangeInput {
  return {
    namespace: 'database',
    name: engine === 'postgresql' ? 'postgresql-credentials' : 'rabbitmq-credentials',
    encryptedData: { password: NEW_CIPHERTEXT },
    change: {
      engine,
      pod: engine === 'postgresql' ? 'postgresql-0' : 'rabbitmq-0',
      container: engine,
      users: { password: 'tcr' },
      image: 'alpine/k8s:1.32.4',
    },
  };
}

/** The Job's `sh -c` script, as the manifest carries it. */
function scriptOf(manifest: string): string {
  const job = parseAllDocuments(manifest)
    .map((doc) => doc.toJS() as { kind: string; spec?: { template: { spec: { containers: { command: string[] }[] } } } })
    .find((object) => object.kind === 'Job');
  const command = job?.spec?.template.spec.containers[0]?.command ?? [];
  assert.deepEqual(command.slice(0, 2), ['sh', '-c']);
  return command[2]!;
}

interface Outcome {
  readonly status: number | null;
  readonly stderr: string;
  readonly stdin: string;
  readonly execArgs: string;
  readonly calls: string;
  readonly sleeps: number;
}

/** Runs the script with the cluster in `state` (file name → content). */
function run(engine: 'postgresql' | 'rabbitmq', state: Record<string, string>): Outcome {
  const dir = mkdtempSync(join(tmpdir(), 'password-change-'));
  try {
    const bin = join(dir, 'bin');
    const stateDir = join(dir, 'state');
    for (const [path, text, mode] of [
      [join(bin, 'kubectl'), KUBECTL, 0o755],
      [join(bin, 'sleep'), SLEEP, 0o755],
    ] as const) {
      spawnSync('mkdir', ['-p', bin, stateDir]);
      writeFileSync(path, text);
      chmodSync(path, mode);
    }
    for (const [name, text] of Object.entries(state)) writeFileSync(join(stateDir, name), text);
    const result = spawnSync('sh', ['-c', scriptOf(passwordChangeManifest(input(engine)))], {
      env: { PATH: `${bin}:/usr/bin:/bin`, FAKE_STATE: stateDir, HOME: dir },
      encoding: 'utf8',
      timeout: 20_000,
    });
    const read = (name: string) => (existsSync(join(stateDir, name)) ? readFileSync(join(stateDir, name), 'utf8') : '');
    return {
      status: result.status,
      stderr: result.stderr,
      stdin: read('exec-stdin'),
      execArgs: read('exec-args'),
      calls: read('calls'),
      sleeps: Number(read('sleeps') || 0),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The cluster once the controller unsealed this rotation: new ciphertext, generation 2 observed, Synced, the new value in the Secret. */
const UNSEALED = { 'sealed-password': NEW_CIPHERTEXT, status: '2/2/True', 'secret-password': b64("n3w'pw") };

describe('the password-change Job script', () => {
  it('holds no ${…}, which Flux’s postBuild substitution would take for a variable of the layer', () => {
    for (const engine of ['postgresql', 'rabbitmq'] as const) assert.doesNotMatch(scriptOf(passwordChangeManifest(input(engine))), /\$\{/, engine);
  });

  it('sets the new password through psql on stdin, quoted, with ON_ERROR_STOP, and no value on any command line', () => {
    const outcome = run('postgresql', UNSEALED);
    assert.equal(outcome.status, 0, outcome.stderr);
    assert.equal(outcome.stdin, `ALTER ROLE "tcr" PASSWORD 'n3w''pw';\n`);
    assert.match(
      outcome.execArgs,
      /^exec -i -n database postgresql-0 -c postgresql -- psql --no-psqlrc --quiet --set ON_ERROR_STOP=1 --username=postgres --dbname=postgres$/m,
    );
    assert.doesNotMatch(outcome.calls, /n3w/);
  });

  it('sets a RabbitMQ password on rabbitmqctl’s stdin, exactly, without a newline', () => {
    const outcome = run('rabbitmq', UNSEALED);
    assert.equal(outcome.status, 0, outcome.stderr);
    assert.equal(outcome.stdin, "n3w'pw");
    assert.match(outcome.execArgs, /-- rabbitmqctl change_password tcr$/m);
  });

  it('waits for this rotation’s ciphertext and for the controller to have unsealed that generation, then reads the new value', () => {
    // Before: the previous rotation, unsealed and Synced. Tick 1: Flux applies the new SealedSecret (generation 2),
    // the status still the previous one's. Tick 2: the controller writes the Secret, then its status.
    const outcome = run('postgresql', {
      'sealed-password': 'AgB-old-ciphertext==',
      status: '1/1/True',
      'secret-password': b64('old-password'),
      'tick-1': `printf '%s' '${NEW_CIPHERTEXT}' > "$S/sealed-password"; echo 2/1/True > "$S/status"\n`,
      'tick-2': `printf '%s' '${b64('fresh')}' > "$S/secret-password"; echo 2/2/True > "$S/status"\n`,
    });
    assert.equal(outcome.status, 0, outcome.stderr);
    assert.equal(outcome.sleeps, 2);
    assert.equal(outcome.stdin, `ALTER ROLE "tcr" PASSWORD 'fresh';\n`);
  });

  it('waits while the controller reports the rotation not synced', () => {
    const outcome = run('postgresql', {
      'sealed-password': NEW_CIPHERTEXT,
      status: '2/2/False',
      'secret-password': b64('fresh'),
      'tick-3': 'echo 2/2/True > "$S/status"\n',
    });
    assert.equal(outcome.status, 0, outcome.stderr);
    assert.equal(outcome.sleeps, 3);
    assert.equal(outcome.stdin, `ALTER ROLE "tcr" PASSWORD 'fresh';\n`);
  });

  it("fails, setting nothing, when the Secret cannot be read or holds no value: never ALTER ROLE … PASSWORD ''", () => {
    for (const [why, state] of [
      ['the API refuses the read', { ...UNSEALED, 'secret-fails': '' }],
      ['the Secret has no such key', { 'sealed-password': NEW_CIPHERTEXT, status: '2/2/True' }],
      ['the key is empty', { ...UNSEALED, 'secret-password': '' }],
      ['the value decodes to nothing', { ...UNSEALED, 'secret-password': b64('') + '\n' }],
    ] as const) {
      for (const engine of ['postgresql', 'rabbitmq'] as const) {
        const outcome = run(engine, state);
        assert.notEqual(outcome.status, 0, `${engine}, ${why}: the pod fails and is retried`);
        assert.equal(outcome.execArgs, '', `${engine}, ${why}: the database is not touched`);
      }
    }
  });

  it('fails when the database refuses the change, so the Job is not marked done', () => {
    for (const engine of ['postgresql', 'rabbitmq'] as const) {
      const outcome = run(engine, { ...UNSEALED, 'exec-exit': '3' });
      assert.notEqual(outcome.status, 0, engine);
    }
  });
});
