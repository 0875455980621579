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
import type { GitRemote } from '../runner/ports.js';
import { parseSealingCertificate } from '../sealing/sealing-certificate.js';
import type { PreviewInput, ScaffoldPreview, ScaffoldPreviewer } from '../service/scaffold-previewer.js';
import { filesBefore, previewFiles } from '../git/preview-files.js';
import { platformCommitOf } from '../git/render-work-tree.js';

/** Collaborators of the previewer. */
export interface GitScaffoldPreviewerDeps {
  readonly git: GitRemote;
  readonly generatorVersion: string;
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
      const workspace = await this.deps.git.clone({
        url: input.repositoryUrl,
        branch: input.branch,
        dir: join(work, 'repo'),
        sparsePaths: ['base', `clusters/${input.reference}`, gitopsPath],
        sparseTopLevelExcept: ['clusters'],
        ...(credentials ? { credentials: { kind: 'token', token: credentials.token, ...(credentials.username ? { username: credentials.username } : {}) } } : {}),
        ...(input.signal ? { signal: input.signal } : {}),
      });
      // The clone's git objects, not its files: a link is refused by its path, whatever it points at.
      const reader = new GitObjectRepoReader(workspace.dir);
      try {
        const before = await filesBefore(reader, gitopsPath);
        const platformCommit = await platformCommitOf(workspace.dir, input.reference);
        const certificate = input.secrets.certificate ? parseSealingCertificate(input.secrets.certificate, 'sealing.certificate', this.deps.now?.() ?? new Date()) : undefined;
        const result = await renderCluster(reader, {
          cluster: input.cluster,
          reference: input.reference,
          pass: certificate ? 'all' : 'infrastructure',
          random: (size) => randomBytes(size),
          generatorVersion: this.deps.generatorVersion,
          ...(certificate ? { certificate } : {}),
          ...(input.secrets.registryDockerconfigjson !== undefined ? { registryAuth: input.secrets.registryDockerconfigjson } : {}),
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
