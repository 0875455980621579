// The unit suite in one process: every unit test file (scripts/test-suites.mjs
// decides which) imported here, so node and tsx start once, not once per file.
// Run under `node --import tsx --test`. Before loading them it makes starting a
// child process or opening a socket throw, so a unit test that reaches an edge
// the import rule could not see (global fetch, a computed import) fails loudly
// instead of quietly slowing the fast path down. UNIT_TEST_FILES (newline-separated,
// repository-relative) narrows the set, for the guard's own test.
import { syncBuiltinESMExports } from 'node:module';
import childProcess from 'node:child_process';
import net from 'node:net';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { REPO_ROOT, classifyTests } from './test-suites.mjs';

function refuse(what) {
  return () => {
    throw new Error(`a unit test may not ${what}: move the test to integration (import the edge, or put it under test/integration/)`);
  };
}
for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) childProcess[name] = refuse('start a child process');
net.connect = refuse('open a socket');
net.createConnection = refuse('open a socket');
net.Socket.prototype.connect = refuse('open a socket');
net.Server.prototype.listen = refuse('listen on a socket');
syncBuiltinESMExports();

const files = process.env.UNIT_TEST_FILES ? process.env.UNIT_TEST_FILES.split('\n').filter(Boolean) : classifyTests().unit;
for (const file of files) await import(pathToFileURL(join(REPO_ROOT, file)).href);
