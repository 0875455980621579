/**
 * What a render would change, file by file: shared by the service's dry run
 * and `generate-gitops-env render --dry-run`, so both report the same thing.
 */
import type { RepoReader } from '../gitops/repo-reader.js';
import type { RenderResult } from '../gitops/render-cluster.js';
import type { PreviewFile } from '../run/scaffold-previewer.js';

/** Every file under `gitopsPath` as the repository holds it now, before a render. */
export async function filesBefore(reader: RepoReader, gitopsPath: string): Promise<Map<string, string>> {
  const before = new Map<string, string>();
  for (const path of await reader.list(gitopsPath)) before.set(path, (await reader.read(path)) ?? '');
  return before;
}

/** The render's files against `before`, sorted by path. */
export function previewFiles(before: ReadonlyMap<string, string>, result: Pick<RenderResult, 'tree' | 'stale'>): PreviewFile[] {
  const files: PreviewFile[] = [];
  for (const [path, content] of result.tree) {
    const old = before.get(path);
    if (old === undefined) files.push({ path, change: 'added', content });
    else if (old === content) files.push({ path, change: 'unchanged', content });
    else files.push({ path, change: 'modified', content, previousContent: old });
  }
  // A render removes only what it wrote before (flux-system/ and others' files stay).
  for (const path of result.stale) files.push({ path, change: 'removed', previousContent: before.get(path) ?? '' });
  return files.sort((a, b) => a.path.localeCompare(b.path));
}
