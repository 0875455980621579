import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { ValidationError } from '../errors.js';
import {
  CREATED_ANNOTATION,
  FLUX_CONFIG_MEDIA_TYPE,
  FLUX_CONTENT_MEDIA_TYPE,
  OCI_MANIFEST_MEDIA_TYPE,
  REVISION_ANNOTATION,
  SOURCE_ANNOTATION,
  buildFluxArtifact,
  fluxRevision,
} from './flux-artifact.js';

const COMMIT = '0123456789abcdef0123456789abcdef01234567';
const layer = Buffer.from('not really a tarball, but bytes');

function sha256(bytes: Buffer): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

describe('buildFluxArtifact', () => {
  const input = {
    layer,
    revision: `main@sha1:${COMMIT}`,
    created: new Date('2025-03-04T05:06:07.890Z'),
    source: 'https://git.example.net/platform/gitops.git',
  };

  it('builds the manifest `flux push artifact` builds', () => {
    const artifact = buildFluxArtifact(input);
    assert.deepEqual(artifact.manifest, {
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: {
        mediaType: 'application/vnd.cncf.flux.config.v1+json',
        // The digest of `{}`: the OCI "empty descriptor".
        digest: 'sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a',
        size: 2,
      },
      layers: [{ mediaType: 'application/vnd.cncf.flux.content.v1.tar+gzip', digest: sha256(layer), size: layer.length }],
      annotations: {
        'org.opencontainers.image.created': '2025-03-04T05:06:07Z',
        'org.opencontainers.image.revision': `main@sha1:${COMMIT}`,
        'org.opencontainers.image.source': 'https://git.example.net/platform/gitops.git',
      },
    });
    assert.equal(OCI_MANIFEST_MEDIA_TYPE, artifact.manifest.mediaType);
    assert.equal(FLUX_CONFIG_MEDIA_TYPE, artifact.manifest.config.mediaType);
    assert.equal(FLUX_CONTENT_MEDIA_TYPE, artifact.manifest.layers[0]?.mediaType);
    assert.deepEqual(Object.keys(artifact.manifest.annotations), [CREATED_ANNOTATION, REVISION_ANNOTATION, SOURCE_ANNOTATION]);
  });

  it('carries the blobs the descriptors describe', () => {
    const artifact = buildFluxArtifact(input);
    assert.equal(artifact.config.content.toString('utf8'), '{}');
    assert.equal(artifact.config.descriptor.digest, sha256(artifact.config.content));
    assert.ok(artifact.layer.content.equals(layer));
    assert.equal(artifact.layer.descriptor.digest, sha256(layer));
  });

  it('digests exactly the manifest bytes, which are compact JSON of the manifest', () => {
    const artifact = buildFluxArtifact(input);
    assert.equal(artifact.digest, sha256(artifact.manifestBytes));
    assert.deepEqual(JSON.parse(artifact.manifestBytes.toString('utf8')), artifact.manifest);
    assert.ok(!artifact.manifestBytes.toString('utf8').includes('\n'));
    assert.match(artifact.manifestBytes.toString('utf8'), /^\{"schemaVersion":2,"mediaType":/);
  });

  it('is deterministic, and the digest follows every input', () => {
    const digest = buildFluxArtifact(input).digest;
    assert.equal(buildFluxArtifact({ ...input }).digest, digest);
    // Sub-second differences vanish: created has whole seconds.
    assert.equal(buildFluxArtifact({ ...input, created: new Date('2025-03-04T05:06:07.001Z') }).digest, digest);
    assert.notEqual(buildFluxArtifact({ ...input, created: new Date('2025-03-04T05:06:08Z') }).digest, digest);
    assert.notEqual(buildFluxArtifact({ ...input, revision: `sha1:${COMMIT}` }).digest, digest);
    assert.notEqual(buildFluxArtifact({ ...input, layer: Buffer.from('other') }).digest, digest);
  });

  it('omits the source annotation when there is no source', () => {
    const { source: _source, ...withoutSource } = input;
    const artifact = buildFluxArtifact(withoutSource);
    assert.deepEqual(Object.keys(artifact.manifest.annotations), [CREATED_ANNOTATION, REVISION_ANNOTATION]);
    assert.deepEqual(Object.keys(buildFluxArtifact({ ...input, source: '' }).manifest.annotations), [CREATED_ANNOTATION, REVISION_ANNOTATION]);
  });

  it('refuses an invalid time or an empty revision', () => {
    assert.throws(() => buildFluxArtifact({ ...input, created: new Date('nope') }), ValidationError);
    assert.throws(() => buildFluxArtifact({ ...input, revision: '' }), ValidationError);
  });
});

describe('fluxRevision', () => {
  it('uses RFC-0005: <branch>@sha1:<commit>, or sha1:<commit> without a branch', () => {
    assert.equal(fluxRevision(COMMIT, 'main'), `main@sha1:${COMMIT}`);
    assert.equal(fluxRevision(COMMIT, 'release/v1'), `release/v1@sha1:${COMMIT}`);
    assert.equal(fluxRevision(COMMIT), `sha1:${COMMIT}`);
  });

  it('says sha256 for a SHA-256 repository', () => {
    const commit = 'a'.repeat(64);
    assert.equal(fluxRevision(commit, 'main'), `main@sha256:${commit}`);
  });

  it('refuses an abbreviated or non-hex commit and an unusable branch', () => {
    assert.throws(() => fluxRevision('0123456'), ValidationError);
    assert.throws(() => fluxRevision(COMMIT.toUpperCase()), ValidationError);
    assert.throws(() => fluxRevision(`${COMMIT}0`), ValidationError);
    assert.throws(() => fluxRevision(COMMIT, ''), ValidationError);
    assert.throws(() => fluxRevision(COMMIT, 'has space'), ValidationError);
  });
});
