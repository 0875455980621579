/**
 * The executor contract (run-executor.contract.ts) against the local
 * executor: real child processes, a fake runner that plays the script the
 * contract writes for its run.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalExecutor } from './local-executor.js';
import { runScaffoldExecutorContract } from '../service/run-executor.contract.js';

// Writes what it was given (<scripts>/<run id>.env.json: its SCAFFOLD_* variables), waits for its
// script (<scripts>/<run id>.json), prints its lines, then writes the result and exits, or hangs.
const PLAYER = `
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
const given = join(process.env.SCRIPTS, process.env.SCAFFOLD_ID + '.env.json');
writeFileSync(given + '.tmp', JSON.stringify(Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('SCAFFOLD_')))));
renameSync(given + '.tmp', given);
const file = join(process.env.SCRIPTS, process.env.SCAFFOLD_ID + '.json');
const wait = () => new Promise((resolve) => setTimeout(resolve, 20));
while (!existsSync(file)) await wait();
const script = JSON.parse(readFileSync(file, 'utf8'));
for (const line of script.lines) process.stdout.write(line + '\\n');
if (script.hang) setInterval(() => {}, 1000);
else {
  if (script.result) writeFileSync(process.env.SCAFFOLD_RESULT_FILE, JSON.stringify(script.result));
  process.exitCode = script.exitCode ?? (script.result?.status === 'succeeded' ? 0 : 1);
}
`;

runScaffoldExecutorContract('LocalExecutor', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'local-executor-contract-'));
  const scripts = join(dir, 'scripts');
  await writeFile(join(dir, 'player.mjs'), PLAYER);
  await mkdir(scripts);
  const executor = new LocalExecutor({
    runnerCommand: { command: process.execPath, args: [join(dir, 'player.mjs')] },
    dataDir: join(dir, 'data'),
    extraEnv: { SCRIPTS: scripts },
    killGraceMs: 2000,
  });
  return {
    executor,
    async play(run, script) {
      // Written whole, then renamed: the player polls for the file and would otherwise read it half-written.
      await writeFile(join(scripts, `${run.id}.json.tmp`), JSON.stringify(script));
      await rename(join(scripts, `${run.id}.json.tmp`), join(scripts, `${run.id}.json`));
      if (script.hang) {
        // Running once its lines are out.
        for (let i = 0; i < 500 && (await executor.inspect(run)).state !== 'running'; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async runnerView(run) {
      // Secrets reach a local runner as values in its environment: no file.
      const given = join(scripts, `${run.id}.env.json`);
      for (let i = 0; i < 500 && !existsSync(given); i++) await new Promise((resolve) => setTimeout(resolve, 20));
      return { env: JSON.parse(await readFile(given, 'utf8')) as Record<string, string>, files: {} };
    },
    async cleanup() {
      await executor.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
