/**
 * `npm run chaos`: fault trials against the real parts (PostgreSQL, PGlite,
 * git daemon on loopback, the service and its runners as processes), each
 * checking the invariants that say no fault lost anything. Prints one table;
 * exits 1 when any invariant is violated (or a trial could not run), so CI
 * fails loudly. `npm run chaos -- <name> …` runs only the named trials.
 *
 * Not part of `npm test`: a full run takes minutes and starts its own
 * PostgreSQL server (scripts/test-suites.mjs only collects *.test.ts files).
 */
import { performance } from 'node:perf_hooks';
import { upstreamToolsBin } from '../upstream-tools.mjs';
import { clockSkewTrial } from './clock-skew.js';
import { databaseOutageTrial } from './database-outage.js';
import { inFlightPushTrial } from './in-flight-push.js';
import { serviceKillTrial } from './service-kill.js';
import { allHeld, formatTable, type Trial, type TrialReport } from './report.js';

// The runners build trees with the kustomize the runner image ships, as the tests do (scripts/run-tests.mjs).
process.env['PATH'] = `${upstreamToolsBin()}:${process.env['PATH'] ?? ''}`;

const TRIALS: Record<string, () => Trial> = {
  'in-flight-push': () => inFlightPushTrial(10),
  'database-outage': () => databaseOutageTrial(6, 30),
  'clock-skew': () => clockSkewTrial(),
  'service-kill-pglite': () => serviceKillTrial('pglite'),
  'service-kill-postgresql': () => serviceKillTrial('postgresql'),
};

const wanted = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
const unknown = wanted.filter((name) => !(name in TRIALS));
if (unknown.length > 0) {
  console.error(`unknown trial(s): ${unknown.join(', ')}; trials: ${Object.keys(TRIALS).join(', ')}`);
  process.exit(2);
}

const reports: TrialReport[] = [];
for (const [key, make] of Object.entries(TRIALS)) {
  if (wanted.length > 0 && !wanted.includes(key)) continue;
  const trial = make();
  const began = performance.now();
  console.error(`chaos: ${trial.name} …`);
  try {
    const report = await trial.run();
    reports.push({ ...report, seconds: (performance.now() - began) / 1000 });
  } catch (error) {
    // A trial that could not run proves nothing: it counts as violated.
    reports.push({
      trial: trial.name,
      faults: '(did not run)',
      runs: 0,
      seconds: (performance.now() - began) / 1000,
      invariants: [{ name: 'trial ran', held: false, detail: error instanceof Error ? (error.stack ?? error.message) : String(error) }],
    });
  }
  console.error(`chaos: ${trial.name} done in ${reports.at(-1)!.seconds.toFixed(0)} s`);
}

console.log(formatTable(reports));
const held = allHeld(reports);
console.log(held ? '\nall invariants held' : '\nINVARIANT VIOLATED: see the rows marked VIOLATED');
process.exit(held ? 0 : 1);
