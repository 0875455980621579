/**
 * `generate-gitops-env publish`: packages the platform repository's HEAD as a
 * Flux OCI artifact and pushes it, tagged with the commit SHA and `latest`
 * by default, so clusters can reconcile from an OCIRepository instead of Git
 * (spec 001, "OCI-based distribution").
 *
 * The artifact holds exactly the files of the HEAD commit as `git archive`
 * exports them: tracked files only, nothing of `.git`, no uncommitted change,
 * and none of the paths `.gitattributes` marks `export-ignore`. Publishing the
 * same commit again gives the same manifest digest (the layer is
 * reproducible and `created` defaults to the commit time), so a re-run only
 * re-tags what the registry already holds.
 */
import { stat, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { extract as tarExtract } from 'tar-stream';
import { ValidationError } from '../errors.js';
import { runGit } from '../git/git-process.js';
import { type ArtifactFile, packTree } from './artifact-layer.js';
import { OCI_MANIFEST_MEDIA_TYPE, buildFluxArtifact, fluxRevision } from './flux-artifact.js';
import { assertOciTag, parseOciReference } from './oci-reference.js';
import { type RegistryCredentials, RegistryClient } from './registry-client.js';

/** What to publish and where. */
export interface PublishPlatformOptions {
  /** A Git repository (work tree or bare); its HEAD commit is published. */
  readonly repoDir: string;
  /** `oci://host[:port]/path`, optionally with one `:tag` (then the only tag pushed unless `tags` is given). */
  readonly reference: string;
  /** Tags to push the manifest under. @default [the full commit SHA, 'latest'] */
  readonly tags?: readonly string[];
  /**
   * `org.opencontainers.image.source`; user info (credentials) is stripped.
   * @default the repository's `remote.origin.url`; omitted when there is none
   */
  readonly source?: string;
  /** `org.opencontainers.image.created`. @default the commit's committer time */
  readonly created?: Date;
  /** Registry credentials; omitted: anonymous. Read them from the environment or a file, never a flag. */
  readonly credentials?: RegistryCredentials;
  /** Plain HTTP to the registry. @default true for a loopback registry, false otherwise */
  readonly insecure?: boolean;
  /** Cancels git and the registry requests. */
  readonly signal?: AbortSignal;
  /** Limit of each registry request. @default 120000 */
  readonly timeoutMs?: number;
}

/** What was pushed. */
export interface PublishPlatformResult {
  /** The manifest digest, `sha256:<hex>`: what every tag now points at. */
  readonly digest: string;
  /** The tags pushed, in order. */
  readonly tags: readonly string[];
  /** Bytes of the content layer (the compressed tarball). */
  readonly size: number;
  /** `host[:port]/path`, the repository pushed to. */
  readonly repository: string;
  /** The revision annotation, `<branch>@sha1:<commit>` or `sha1:<commit>` on a detached HEAD. */
  readonly revision: string;
  /** The source annotation, when there is one. */
  readonly source?: string;
  /** Number of files in the artifact. */
  readonly files: number;
}

/**
 * Drops credentials from a URL before it becomes a public annotation: the
 * password always, and for http(s) the username too (it is often a token, as in
 * `https://<token>@github.com/…`). An ssh user such as `git@` stays; scp-like
 * addresses and paths are left alone.
 */
function withoutCredentials(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  const web = parsed.protocol === 'http:' || parsed.protocol === 'https:';
  if (!parsed.password && !(web && parsed.username)) return url;
  parsed.password = '';
  if (web) parsed.username = '';
  return parsed.toString();
}

function resolveTags(explicit: readonly string[] | undefined, fromReference: string | undefined, commit: string): string[] {
  if (explicit !== undefined && fromReference !== undefined) {
    throw new ValidationError([{ field: 'tags', message: 'give the tag either in the reference or as tags, not both' }]);
  }
  const tags = explicit ?? (fromReference !== undefined ? [fromReference] : [commit, 'latest']);
  if (tags.length === 0) throw new ValidationError([{ field: 'tags', message: 'at least one tag is needed' }]);
  return [...new Set(tags)];
}

/** The regular files of a `git archive` tarball; directories (and submodules, which git exports as empty ones) are implied by paths. */
async function filesOfArchive(archive: Buffer): Promise<ArtifactFile[]> {
  const files: ArtifactFile[] = [];
  const reader = tarExtract();
  reader.end(archive);
  for await (const entry of reader) {
    const { name, type, mode } = entry.header;
    const chunks: Buffer[] = [];
    for await (const chunk of entry) chunks.push(chunk as Buffer);
    if (type === 'directory') continue;
    if (type === 'symlink') {
      throw new ValidationError([
        { field: 'repoDir', message: `${JSON.stringify(name)} is a symbolic link; Flux's source-controller refuses to extract an artifact holding one` },
      ]);
    }
    if (type !== 'file' && type !== 'contiguous-file') {
      throw new ValidationError([{ field: 'repoDir', message: `${JSON.stringify(name)} is a ${type}, not a regular file` }]);
    }
    files.push({ path: name, content: Buffer.concat(chunks), executable: (mode & 0o111) !== 0 });
  }
  return files;
}

interface HeadCommit {
  readonly commit: string;
  readonly branch: string | undefined;
  readonly committedAt: Date;
  readonly originUrl: string | undefined;
}

async function readHead(repoDir: string, signal: AbortSignal | undefined): Promise<HeadCommit> {
  const git = (args: readonly string[], okExitCodes?: readonly number[]) =>
    runGit(args, { cwd: repoDir, ...(signal ? { signal } : {}), ...(okExitCodes ? { okExitCodes } : {}) });
  try {
    if (!(await stat(repoDir)).isDirectory()) throw new Error('not a directory');
  } catch {
    throw new ValidationError([{ field: 'repoDir', message: 'is not a directory' }]);
  }
  const probe = await git(['rev-parse', '--git-dir'], [0, 128]);
  if (probe.exitCode !== 0) throw new ValidationError([{ field: 'repoDir', message: 'is not a Git repository' }]);
  const head = await git(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], [0, 1]);
  const commit = head.stdout.trim();
  if (head.exitCode !== 0 || commit.length === 0) throw new ValidationError([{ field: 'repoDir', message: 'has no commit to publish (HEAD is unborn)' }]);
  const [branch, time, origin] = await Promise.all([
    git(['symbolic-ref', '--quiet', '--short', 'HEAD'], [0, 1]),
    git(['show', '--no-patch', '--format=%ct', commit]),
    git(['config', '--get', 'remote.origin.url'], [0, 1]),
  ]);
  const seconds = Number.parseInt(time.stdout.trim(), 10);
  return {
    commit,
    branch: branch.exitCode === 0 && branch.stdout.trim() ? branch.stdout.trim() : undefined,
    committedAt: new Date((Number.isFinite(seconds) ? seconds : 0) * 1000),
    originUrl: origin.exitCode === 0 && origin.stdout.trim() ? origin.stdout.trim() : undefined,
  };
}

async function archiveCommit(repoDir: string, commit: string, signal: AbortSignal | undefined): Promise<ArtifactFile[]> {
  // runGit decodes stdout as UTF-8, which would corrupt binary files: let git write the tarball to a file.
  const dir = await mkdtemp(join(tmpdir(), 'gitops-publish-'));
  try {
    const output = join(dir, 'head.tar');
    await runGit(['archive', '--format=tar', `--output=${output}`, commit], { cwd: repoDir, ...(signal ? { signal } : {}) });
    return await filesOfArchive(await readFile(output));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Packs the HEAD commit of `repoDir` as a Flux artifact and pushes it: the
 * config and content blobs (skipped when the registry has them), then the
 * manifest under each tag.
 *
 * @throws ValidationError for a bad reference or tag, a directory that is not a
 *   Git repository or has no commit, or a tree Flux could not extract (a symlink)
 * @throws AuthenticationError / ForbiddenError when the registry refuses the credentials or the push
 * @throws UnavailableError when git fails or the registry cannot be reached or fails
 * @throws TimeoutError when a registry request exceeds `timeoutMs`
 * @throws the signal's reason when `signal` aborts
 */
export async function publishPlatform(options: PublishPlatformOptions): Promise<PublishPlatformResult> {
  const { signal } = options;
  const reference = parseOciReference(options.reference);
  if (reference.digest !== undefined) {
    throw new ValidationError([{ field: 'reference', message: 'must not name a digest: publishing pushes by tag' }]);
  }
  // Before any git work: a bad tag fails fast.
  if (options.tags !== undefined) options.tags.forEach((tag, i) => assertOciTag(tag, `tags[${i}]`));

  const head = await readHead(options.repoDir, signal);
  const tags = resolveTags(options.tags, reference.tag, head.commit);
  const files = await archiveCommit(options.repoDir, head.commit, signal);
  const layer = await packTree(files);
  const sourceUrl = options.source ?? head.originUrl;
  const source = sourceUrl !== undefined && sourceUrl.length > 0 ? withoutCredentials(sourceUrl) : undefined;
  const revision = fluxRevision(head.commit, head.branch);
  const artifact = buildFluxArtifact({ layer, revision, created: options.created ?? head.committedAt, ...(source !== undefined ? { source } : {}) });

  const client = new RegistryClient({
    reference,
    ...(options.credentials ? { credentials: options.credentials } : {}),
    ...(options.insecure !== undefined ? { insecure: options.insecure } : {}),
    ...(signal ? { signal } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
  });
  // One after the other: the first request negotiates the authorization the rest reuse.
  await client.pushBlob(artifact.config.content, artifact.config.descriptor.digest);
  await client.pushBlob(artifact.layer.content, artifact.layer.descriptor.digest);
  for (const tag of tags) await client.putManifest(tag, artifact.manifestBytes, OCI_MANIFEST_MEDIA_TYPE);

  return {
    digest: artifact.digest,
    tags,
    size: artifact.layer.descriptor.size,
    repository: `${reference.registry}/${reference.repository}`,
    revision,
    ...(source !== undefined ? { source } : {}),
    files: files.length,
  };
}
