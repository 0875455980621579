/**
 * Pinned versions, bumped by a bot: each shipped platform carries a Renovate
 * configuration, and what Renovate's flux manager needs to propose a chart
 * bump holds for every HelmRelease in it (docs of the flux manager): the file
 * is one the manager reads, the version is pinned, and the chart's
 * HelmRepository is found by name in the namespace the release names.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { isRecord } from '../../src/model/is-record.js';
import { platformDir } from '../../src/package-paths.js';

interface RenovateConfig {
  extends: string[];
  flux: { managerFilePatterns: string[] };
  kubernetes: { managerFilePatterns: string[] };
  ignorePaths: string[];
  packageRules: { matchUpdateTypes?: string[]; dependencyDashboardApproval?: boolean; groupName?: string }[];
}

/** Renovate's `/regex/` form of a managerFilePatterns entry (globs are not used here). */
function patternOf(entry: string): RegExp {
  assert.match(entry, /^\/.*\/$/, `${entry} is written as a /regex/`);
  return new RegExp(entry.slice(1, -1));
}

/** `**` / `*` globs of ignorePaths, as minimatch reads them for these simple forms. */
function ignored(path: string, globs: readonly string[]): boolean {
  return globs.some((glob) =>
    new RegExp(
      `^${glob
        .replace(/\*\*\//g, '(?:.*/)?')
        .replace(/\*\*/g, '.*')
        .replace(/(?<!\.)\*/g, '[^/]*')}$`,
    ).test(path),
  );
}

async function yamlFiles(root: string): Promise<Map<string, Record<string, unknown>[]>> {
  const out = new Map<string, Record<string, unknown>[]>();
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !/\.ya?ml$/.test(entry.name)) continue;
    const path = relative(root, join(entry.parentPath, entry.name)).split(sep).join('/');
    const docs = parseAllDocuments(await readFile(join(root, path), 'utf8'))
      .map((d) => d.toJS() as unknown)
      .filter(isRecord);
    out.set(path, docs);
  }
  return out;
}

for (const platform of ['default', 'matrix-example']) {
  describe(`Renovate proposes the bumps of ${platform}`, () => {
    it('reaches every HelmRelease with a pinned version and a HelmRepository it can link', async () => {
      const root = platformDir(platform);
      const config = JSON.parse(await readFile(join(root, 'renovate.json'), 'utf8')) as RenovateConfig;
      const flux = config.flux.managerFilePatterns.map(patternOf);
      const files = await yamlFiles(root);
      const read = [...files].filter(([path]) => flux.some((p) => p.test(path)) && !ignored(path, config.ignorePaths));
      const repositories = new Set(
        read.flatMap(([, docs]) =>
          docs
            .filter((d) => d.kind === 'HelmRepository')
            .map((d) => `${String((d.metadata as Record<string, unknown>).namespace)}/${String((d.metadata as Record<string, unknown>).name)}`),
        ),
      );
      let releases = 0;
      for (const [path, docs] of files) {
        for (const release of docs.filter((d) => d.kind === 'HelmRelease')) {
          releases += 1;
          const name = `${path}: HelmRelease ${String((release.metadata as Record<string, unknown>).name)}`;
          assert.ok(
            read.some(([p]) => p === path),
            `${name} is in a file the flux manager reads`,
          );
          const chart = (
            (release.spec as Record<string, unknown>).chart as
              { spec?: { version?: string; sourceRef?: { kind: string; name: string; namespace?: string } } } | undefined
          )?.spec;
          if (chart === undefined) continue; // chartRef to an OCIRepository: the OCIRepository's tag is what Renovate bumps
          assert.match(chart.version ?? '', /^v?\d+\.\d+\.\d+$/, `${name} pins an exact chart version`);
          const namespace = chart.sourceRef?.namespace ?? (release.metadata as Record<string, unknown>).namespace;
          if (chart.sourceRef?.kind === 'HelmRepository')
            assert.ok(
              repositories.has(`${String(namespace)}/${chart.sourceRef.name}`),
              `${name}: HelmRepository ${String(namespace)}/${chart.sourceRef.name} is in a file the manager reads`,
            );
        }
      }
      assert.ok(releases > 5, `${platform} has HelmReleases to bump (${releases})`);
      assert.ok(ignored('clusters/development/apps/sealed/sealed-tcr-database.yaml', config.ignorePaths), 'sealed files are never touched');
      assert.ok(
        config.packageRules.some((r) => r.matchUpdateTypes?.includes('major') && r.dependencyDashboardApproval === true),
        'majors wait for a person',
      );
      assert.ok(
        config.packageRules.some((r) => r.groupName === 'Flux'),
        'Flux moves as one group',
      );
    });
  });
}
