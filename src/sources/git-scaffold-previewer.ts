/**
 * Dry runs: render a scaffold against a read-only clone of the target
 * repository and report what would change, without committing, pushing or
 * storing anything. The clone is partial and sparse like a real run's.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { GitObjectRepoReader } from '../git/git-object-reader.js';
import { renderCluster } from '../gitops/render-cluster.js';
import type { GitRemote } from '../run/ports.js';
import { parseSealingCertificate } from '../sealing/sealing-certificate.js';
import type { PreviewInput, ScaffoldPreview, ScaffoldPreviewer } from '../run/scaffold-previewer.js';
import { filesBefore, previewFiles } from '../git/preview-files.js';
import { platformCommitOf } from '../git/render-work-tree.js';
import { ValidationError, messageOf } from '../errors.js';
import { isContentRefusal } from './anonymous-read-failure.js';
import { redactSecrets } from '../git/git-process.js';
import { silentLogger, type Logger } from '../logger.js';

/**
 * The one answer to a dry run whose clone fails. A dry run names any URL the
 * request rules allow, so git's own words (connection refused, timed out, an
 * HTTP status, a certificate's name) would make the service a port scanner;
 * they go to the service's log instead.
 */
export const DRY_RUN_CLONE_FAILURE =
  'could not be cloned: the URL, the branch or repository.credentials is wrong, or the host did not answer as a git server (the service log has the reason)';

/** Collaborators of the previewer. */
export interface GitScaffoldPreviewerDeps {
  readonly git: GitRemote;
  readonly generatorVersion: string;
  /** Where a failed clone's reason is logged. @default silentLogger */
  readonly logger?: Logger;
  /** When a sealing certificate is checked for validity. @default the current time */
  readonly now?: () => Date;
}

/**
 * Implements dry runs by rendering into memory. With a sealing certificate the
 * full tree is shown (fresh ciphertexts, no plaintext); without one, the
 * infrastructure pass — what step 2 of a run would write.
 */
export class GitScaffoldPreviewer implements ScaffoldPreviewer {
  constructor(private readonly deps: GitScaffoldPreviewerDeps) {}

  async preview(input: PreviewInput): Promise<ScaffoldPreview> {
    const work = await mkdtemp(join(tmpdir(), 'gitops-dry-run-'));
    const gitopsPath = `clusters/${input.cluster.name}`;
    try {
      const credentials = input.secrets.repositoryCredentials;
      let workspace;
      try {
        workspace = await this.deps.git.clone({
          url: input.repositoryUrl,
          branch: input.branch,
          dir: join(work, 'repo'),
          sparsePaths: ['base', `clusters/${input.reference}`, gitopsPath],
          sparseTopLevelExcept: ['clusters'],
          ...(credentials
            ? { credentials: { kind: 'token', token: credentials.token, ...(credentials.username ? { username: credentials.username } : {}) } }
            : {}),
          ...(input.signal ? { signal: input.signal } : {}),
        });
        // A web server answering 200 to anything "clones" as an empty repository: the same answer as no server.
        await workspace.head();
      } catch (error) {
        await workspace?.dispose().catch(() => undefined);
        if (input.signal?.aborted || isContentRefusal(error)) throw error;
        (this.deps.logger ?? silentLogger).warn(
          {
            event: 'dry_run_clone_failed',
            repository: redactSecrets(input.repositoryUrl),
            branch: input.branch,
            err: redactSecrets(messageOf(error), credentials ? [credentials.token] : []),
          },
          'the dry run could not clone the repository',
        );
        throw new ValidationError([{ field: 'repository', message: DRY_RUN_CLONE_FAILURE }], { cause: error });
      }
      // The clone's git objects, not its files: a link is refused by its path, whatever it points at.
      const reader = new GitObjectRepoReader(workspace.dir);
      try {
        const before = await filesBefore(reader, gitopsPath);
        const platformCommit = await platformCommitOf(workspace.dir, input.reference);
        const certificate = input.secrets.certificate
          ? parseSealingCertificate(input.secrets.certificate, 'sealing.certificate', this.deps.now?.() ?? new Date())
          : undefined;
        const result = await renderCluster(reader, {
          cluster: input.cluster,
          reference: input.reference,
          pass: certificate ? 'all' : 'infrastructure',
          random: (size) => randomBytes(size),
          generatorVersion: this.deps.generatorVersion,
          ...(certificate ? { certificate } : {}),
          ...(input.secrets.registryDockerconfigjson !== undefined ? { registryAuth: input.secrets.registryDockerconfigjson } : {}),
          ...(input.secrets.notifications !== undefined
            ? { notificationProvider: input.secrets.notifications.provider, notificationAddress: input.secrets.notifications.address }
            : {}),
          ...(platformCommit ? { platformCommit } : {}),
        });
        return { gitopsPath, files: previewFiles(before, result) };
      } finally {
        reader.close();
        await workspace.dispose().catch(() => undefined);
      }
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }
}
