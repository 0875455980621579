import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import type { ChildRequest } from './child-launcher.js';
import { SizeAwareLauncher } from './size-aware-launcher.js';
import { HelperLauncher } from './spawn-helper.js';

const parentOf: ChildRequest = { command: 'sh', args: ['-c', 'echo $PPID'], cwd: tmpdir(), env: { PATH: process.env['PATH'] }, ownGroup: false };
const helpers: HelperLauncher[] = [];
after(() => helpers.forEach((h) => h.close()));

/** A launcher whose process measures `resident()` bytes against a 100-byte limit, counting the helpers it starts. */
function launcherAt(resident: () => number): { launcher: SizeAwareLauncher; helpersStarted: () => number } {
  let started = 0;
  const launcher = new SizeAwareLauncher({
    limitBytes: 100,
    residentBytes: resident,
    helper: () => {
      started++;
      const helper = new HelperLauncher();
      helpers.push(helper);
      return helper;
    },
  });
  return { launcher, helpersStarted: () => started };
}

const ppid = async (launcher: SizeAwareLauncher): Promise<number> => Number((await launcher.start(parentOf).outcome).stdout.trim());

describe('SizeAwareLauncher', () => {
  it('forks from this process while it is within the limit, and starts no helper', async () => {
    const { launcher, helpersStarted } = launcherAt(() => 100);
    assert.equal(await ppid(launcher), process.pid);
    assert.equal(await ppid(launcher), process.pid);
    assert.equal(helpersStarted(), 0);
  });

  it('goes through one helper from the first child above the limit on, also once memory is back under it', async () => {
    let resident = 50;
    const { launcher, helpersStarted } = launcherAt(() => resident);
    assert.equal(await ppid(launcher), process.pid, 'small: forked here');
    resident = 101;
    const helperPid = await ppid(launcher);
    assert.notEqual(helperPid, process.pid, 'grown: started by the helper');
    resident = 50;
    assert.equal(await ppid(launcher), helperPid, 'the same helper keeps every later child');
    assert.equal(helpersStarted(), 1);
  });
});
