import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { isValidBranchName } from './branch-name.js';
import { runGit } from './git-process.js';

const NAMES = [
  'main',
  'master',
  'fleet/prod',
  'a/b/c',
  'release-1.2',
  'v1.0',
  'x_y',
  'UPPER',
  '0',
  'a.b/c.d',
  '',
  '.',
  '..',
  'a..b',
  '.hidden',
  'a/.b',
  'a/',
  '/a',
  'a//b',
  'a.',
  'a./b',
  'a.lock',
  'a/b.lock',
  'a.lock/b',
  '-x',
  'a b',
  'a~b',
  'a^b',
  'a:b',
  'a?b',
  'a*b',
  'a[b',
  'a\\b',
  'a@{b',
  '@',
  'a@b',
  'a\tb',
  'a\x7fb',
  'é',
  'HEAD',
  'a/@/b',
  'x.lockx',
  '.lock',
];

describe('isValidBranchName', () => {
  it('answers as git check-ref-format does, and refuses what reads as an option', async () => {
    for (const name of NAMES) {
      const git = !name.startsWith('-') && (await runGit(['check-ref-format', `refs/heads/${name}`], { cwd: tmpdir(), okExitCodes: [0, 1] })).exitCode === 0;
      assert.equal(await isValidBranchName(name), git, JSON.stringify(name));
    }
  });
});
