/**
 * A RunService for route tests that never start a run (fleet, catalog,
 * upgrade routes): its executor and previewer refuse every call.
 */
import type { RunExecutor } from '../../src/service/run-executor.js';
import type { ScaffoldPreviewer } from '../../src/run/scaffold-previewer.js';

export const unusedExecutor: RunExecutor = {
  start: async () => Promise.reject(new Error('not used')),
  inspect: async () => ({ state: 'missing' }),
  logs: async function* () {},
  cancel: async () => undefined,
};

export const unusedPreviewer: ScaffoldPreviewer = { preview: async () => Promise.reject(new Error('not used')) };
