/** One strongly connected set of folders and the imports that close it. */
export interface FolderCycle {
  readonly folders: readonly string[];
  readonly imports: readonly string[];
}
export function folderCycles(root: string): FolderCycle[];
