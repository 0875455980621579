import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { ValidationError } from '../errors.js';
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { CoreKindValidator } from '../kustomize/core-kind-validator.js';
import { defaultCrdSchemaDir } from '../kustomize/crd-schema-dir.js';
import { SchemaValidator } from '../verify/schema-validator.js';
import { fluxSyncNote, renderFluxInstance, syncKindOf } from './flux-instance.js';
import { fluxInstanceSpecSchema } from './platform-descriptor.js';

const validator = new SchemaValidator({ schemas: new FsRepoReader(defaultCrdSchemaDir()), coreKinds: new CoreKindValidator() });
const defaults = fluxInstanceSpecSchema.parse({});

describe('renderFluxInstance', () => {
  it('pulls as a GitHub App where scaffold.yaml asks for it, valid against the FluxInstance CRD, and refuses what the App cannot pull', async () => {
    const spec = fluxInstanceSpecSchema.parse({ sync: { provider: 'github', pullSecret: 'flux-github-app' } });
    const rendered = renderFluxInstance(spec, { clusterName: 'c1', syncUrl: 'https://github.com/example/fleet.git' });
    const object = parse(rendered.yaml) as { spec: { sync: Record<string, unknown> } };
    assert.deepEqual(object.spec.sync, {
      kind: 'GitRepository',
      url: 'https://github.com/example/fleet.git',
      ref: 'refs/heads/main',
      path: 'clusters/c1',
      pullSecret: 'flux-github-app',
      provider: 'github',
    });
    assert.deepEqual(await validator.validate(object), { status: 'checked', issues: [] });
    assert.match(
      fluxSyncNote(rendered.sync),
      /as a GitHub App, with short-lived installation tokens: Secret flux-system\/flux-github-app must hold its githubAppID, githubAppInstallationID and githubAppPrivateKey/,
    );
    const refused = (options: { syncUrl: string }, field: string, message: RegExp) =>
      assert.throws(
        () =>
          renderFluxInstance(
            options.syncUrl.startsWith('oci') || options.syncUrl.startsWith('ssh') ? spec : fluxInstanceSpecSchema.parse({ sync: { provider: 'github' } }),
            { clusterName: 'c1', ...options },
          ),
        (error: unknown) => error instanceof ValidationError && error.issues[0]!.field === field && message.test(error.issues[0]!.message),
      );
    refused({ syncUrl: 'oci://ghcr.io/example/fleet' }, 'sync-url', /pulls a Git repository over https/);
    refused({ syncUrl: 'ssh://git@github.com/example/fleet.git' }, 'sync-url', /pulls a Git repository over https/);
    refused({ syncUrl: 'https://github.com/example/fleet.git' }, 'sync-secret', /holding the GitHub App/);
    // Without the provider nothing changes.
    assert.equal(
      (
        parse(renderFluxInstance(defaults, { clusterName: 'c1', syncUrl: 'https://github.com/example/fleet.git' }).yaml) as {
          spec: { sync: { provider?: string } };
        }
      ).spec.sync.provider,
      undefined,
    );
  });

  it("pulls a private repository with the Secret render --sync-secret names, over the descriptor's, and refuses a name that is no Secret name", async () => {
    const spec = fluxInstanceSpecSchema.parse({ sync: { pullSecret: 'flux-system' } });
    const sync = (options: { pullSecret?: string }) =>
      (
        parse(renderFluxInstance(spec, { clusterName: 'c1', syncUrl: 'https://git.example.net/platform/gitops.git', ...options }).yaml) as {
          spec: { sync: { pullSecret?: string } };
        }
      ).spec.sync;
    assert.equal(sync({}).pullSecret, 'flux-system');
    assert.equal(sync({ pullSecret: 'platform-deploy-key' }).pullSecret, 'platform-deploy-key');
    const object = parse(
      renderFluxInstance(spec, { clusterName: 'c1', syncUrl: 'https://git.example.net/platform/gitops.git', pullSecret: 'platform-deploy-key' }).yaml,
    ) as unknown;
    assert.deepEqual(await validator.validate(object), { status: 'checked', issues: [] });
    assert.throws(
      () => renderFluxInstance(defaults, { clusterName: 'c1', syncUrl: 'https://git.example.net/platform/gitops.git', pullSecret: 'Not_A/Name' }),
      (error: unknown) => error instanceof ValidationError && error.issues[0]!.field === 'sync-secret',
    );
  });

  it('refuses an ssh:// sync without a pull Secret (SSH has no anonymous access) and reports what every other sync pulls with', () => {
    assert.throws(
      () => renderFluxInstance(defaults, { clusterName: 'c1', syncUrl: 'ssh://git@git.example.net/platform/gitops.git' }),
      (error: unknown) =>
        error instanceof ValidationError &&
        error.issues.length === 1 &&
        error.issues[0]!.field === 'sync-secret' &&
        /over SSH, which always needs a key/.test(error.issues[0]!.message),
    );
    const ssh = renderFluxInstance(defaults, { clusterName: 'c1', syncUrl: 'ssh://git@git.example.net/platform/gitops.git', pullSecret: 'deploy-key' }).sync;
    assert.deepEqual(ssh, { url: 'ssh://git@git.example.net/platform/gitops.git', kind: 'GitRepository', pullSecret: 'deploy-key' });
    assert.match(fluxSyncNote(ssh), /with the credentials of Secret flux-system\/deploy-key: create it before applying the FluxInstance/);
    const https = renderFluxInstance(defaults, { clusterName: 'c1', syncUrl: 'https://git.example.net/platform/gitops.git' }).sync;
    assert.deepEqual(https, { url: 'https://git.example.net/platform/gitops.git', kind: 'GitRepository' });
    assert.match(
      fluxSyncNote(https),
      /names no pull Secret: Flux pulls https:\/\/git\.example\.net\/platform\/gitops\.git anonymously, which works only for a public repository/,
    );
    const oci = renderFluxInstance(defaults, { clusterName: 'c1', syncUrl: 'oci://ghcr.io/example/platform' }).sync;
    assert.match(fluxSyncNote(oci), /anonymously, which works only for a public OCI repository/);
  });

  it('writes the FluxInstance named flux in flux-system, syncing clusters/<name> from Git, valid against the operator CRD', async () => {
    const { yaml, syncKind } = renderFluxInstance(defaults, { clusterName: 'eu-prod-1', syncUrl: 'https://git.example.net/platform/gitops.git' });
    assert.equal(syncKind, 'GitRepository');
    const object = parse(yaml) as unknown;
    assert.deepEqual(object, {
      apiVersion: 'fluxcd.controlplane.io/v1',
      kind: 'FluxInstance',
      metadata: { name: 'flux', namespace: 'flux-system' },
      spec: {
        distribution: { version: '2.x', registry: 'ghcr.io/fluxcd' },
        components: ['source-controller', 'kustomize-controller', 'helm-controller', 'notification-controller'],
        kustomize: { patches: (object as { spec: { kustomize: { patches: unknown } } }).spec.kustomize.patches },
        sync: { kind: 'GitRepository', url: 'https://git.example.net/platform/gitops.git', ref: 'refs/heads/main', path: 'clusters/eu-prod-1' },
      },
    });
    assert.deepEqual(await validator.validate(object), { status: 'checked', issues: [] });
  });

  it("takes the descriptor's distribution, components, cluster settings and sync options", async () => {
    const spec = fluxInstanceSpecSchema.parse({
      distribution: { version: '2.7.x', registry: 'registry.example.net/fluxcd', artifact: 'oci://registry.example.net/flux-operator-manifests' },
      components: ['source-controller', 'kustomize-controller', 'helm-controller', 'notification-controller', 'source-watcher'],
      cluster: { type: 'aws', size: 'medium', networkPolicy: true },
      sync: { interval: '5m', pullSecret: 'flux-system', ref: 'refs/heads/release' },
    });
    const object = parse(renderFluxInstance(spec, { clusterName: 'c1', syncUrl: 'ssh://git@git.example.net/platform/gitops.git' }).yaml) as {
      spec: Record<string, unknown>;
    };
    assert.deepEqual(object.spec.sync, {
      kind: 'GitRepository',
      url: 'ssh://git@git.example.net/platform/gitops.git',
      ref: 'refs/heads/release',
      path: 'clusters/c1',
      interval: '5m',
      pullSecret: 'flux-system',
    });
    assert.deepEqual(object.spec.cluster, { type: 'aws', size: 'medium', networkPolicy: true });
    assert.deepEqual(await validator.validate(object), { status: 'checked', issues: [] });
    // The render option wins over the descriptor's ref.
    const other = parse(renderFluxInstance(spec, { clusterName: 'c1', syncUrl: 'https://git.example.net/x.git', syncRef: 'refs/tags/v1.2.3' }).yaml) as {
      spec: { sync: { ref: string } };
    };
    assert.equal(other.spec.sync.ref, 'refs/tags/v1.2.3');
  });

  it('syncs an OCI artifact as an OCIRepository, at tag latest unless told', async () => {
    assert.equal(syncKindOf('oci://ghcr.io/example/platform'), 'OCIRepository');
    const object = parse(renderFluxInstance(defaults, { clusterName: 'c1', syncUrl: 'oci://ghcr.io/example/platform' }).yaml) as { spec: { sync: unknown } };
    assert.deepEqual(object.spec.sync, { kind: 'OCIRepository', url: 'oci://ghcr.io/example/platform', ref: 'latest', path: 'clusters/c1' });
    assert.deepEqual(await validator.validate(object), { status: 'checked', issues: [] });
  });

  it('refuses a sync URL with credentials or of another scheme, and a ref of the wrong shape, naming the flag', () => {
    const cases: [Parameters<typeof renderFluxInstance>[1], RegExp][] = [
      [{ clusterName: 'c', syncUrl: 'https://scaffolder:hunter2@git.example.net/x.git' }, /^sync-url: must not carry credentials/],
      [{ clusterName: 'c', syncUrl: 'https://token@git.example.net/x.git' }, /^sync-url: must not carry credentials/],
      [{ clusterName: 'c', syncUrl: 'file:///srv/git/x.git' }, /^sync-url: must be an https:\/\/, http:\/\/, ssh:\/\/ or oci:\/\/ URL/],
      [{ clusterName: 'c', syncUrl: 'https://git.example.net/x.git', syncRef: 'main' }, /^sync-ref: "main" must be a full Git ref such as refs\/heads\/main$/],
      [{ clusterName: 'c', syncUrl: 'https://git.example.net/x.git', syncRef: 'refs/heads/../x' }, /^sync-ref: /],
      [{ clusterName: 'c', syncUrl: 'oci://ghcr.io/x', syncRef: 'refs/heads/main' }, /^sync-ref: "refs\/heads\/main" must be an OCI tag/],
    ];
    for (const [options, message] of cases) {
      assert.throws(
        () => renderFluxInstance(defaults, options),
        (error: unknown) => error instanceof ValidationError && message.test(error.message) && !error.message.includes('hunter2'),
        String(message),
      );
    }
  });
});
