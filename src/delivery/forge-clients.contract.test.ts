/**
 * The ForgeClient contract (forge-client.contract.ts) against every forge of
 * the forge table, each client in front of its loopback forge double over a
 * real bare repository: a forge added to the table is held to the contract
 * as soon as its double answers.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FORGES } from '../model/forges.js';
import { createForgeClient } from './create-delivery.js';
import { runForgeClientContract } from './forge-client.contract.js';
import { startForgeDouble } from '../../test/support/forge-double.js';
import { git } from '../../test/support/git.js';

const OWNER = 'acme';
const REPO = 'platform-gitops';
const TOKEN = 'forge-token-0123456789';

for (const forge of FORGES) {
  runForgeClientContract(forge, async () => {
    const dir = await mkdtemp(join(tmpdir(), `forge-contract-${forge}-`));
    const repoDir = join(dir, `${REPO}.git`);
    await git(dir, 'init', '--quiet', '--bare', repoDir);
    const emptyTree = await git(repoDir, 'mktree', '--missing');
    await git(repoDir, 'update-ref', 'refs/heads/main', await git(repoDir, 'commit-tree', emptyTree, '-m', 'initial'));
    const double = await startForgeDouble({ forge, repoDir, owner: OWNER, repo: REPO, token: TOKEN });
    const repositoryUrl = `${double.baseUrl}/${OWNER}/${REPO}.git`;
    const clientWith = (token: string) => createForgeClient({ forge, repositoryUrl, apiUrl: double.apiUrl, auth: { kind: 'token', token } });
    const pull = (number: number) => {
      const found = double.pulls.find((p) => p.number === number);
      if (!found) throw new Error(`the double has no request ${number}`);
      return found;
    };
    const branchSha = async (branch: string) => (await git(repoDir, 'for-each-ref', '--format=%(objectname)', `refs/heads/${branch}`)) || undefined;
    return {
      client: clientWith(TOKEN),
      strangerClient: clientWith('stranger-token-0123456789'),
      base: 'main',
      async commitOnBranch(branch, from) {
        const parent = await git(repoDir, 'rev-parse', '--verify', `refs/heads/${from}`);
        const commit = await git(repoDir, 'commit-tree', `${parent}^{tree}`, '-p', parent, '-m', `a change on ${branch}`);
        await git(repoDir, 'update-ref', `refs/heads/${branch}`, commit);
        return commit;
      },
      branchSha,
      setChecksPassed(number, passed) {
        pull(number).checksPassed = passed;
      },
      close: (number) => double.close(number),
      labelsOf: (number) => pull(number).labels,
      async cleanup() {
        await double.stop();
        await rm(dir, { recursive: true, force: true });
      },
    };
  });
}
