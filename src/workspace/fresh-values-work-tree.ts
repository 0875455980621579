/**
 * A rotation with fresh values on a working tree on disk, after the render
 * sealed the credentials anew: the password-change Jobs `rotate --fresh-values`
 * writes (`freshValuesFollowUp`), written into the tree, and the refusal of a
 * supplied credential, read from the tree's scaffold.yaml. A rotation run calls
 * these on its working copy; the CLI writes the same files through `rotateCredentials`.
 */
import { FsRepoReader } from '../git/fs-repo-reader.js';
import { writeTree } from '../git/write-tree.js';
import { PLATFORM_DESCRIPTOR_PATH, parsePlatformDescriptor } from '../gitops/platform-descriptor.js';
import { freshValuesFollowUp, refuseFreshSupplied, type FreshValuesFollowUp } from '../gitops/rotate-credentials.js';
import type { CredentialOutcome } from '../gitops/sealed-credentials.js';

/**
 * Refuses fresh values for a supplied credential named in `names`, as scaffold.yaml in `dir` declares them.
 * @throws ValidationError naming them
 */
export async function refuseFreshSuppliedIn(dir: string, names: readonly string[]): Promise<void> {
  refuseFreshSupplied(parsePlatformDescriptor(await new FsRepoReader(dir).read(PLATFORM_DESCRIPTOR_PATH)), names);
}

/**
 * Writes the password-change Jobs of the credentials just sealed anew into the tree at `dir`.
 * @param tree - the render's files (repository-relative), holding each new SealedSecret
 * @returns the Jobs, the files written and the workloads to restart
 */
export async function writeFreshValuesFollowUp(
  dir: string,
  gitopsPath: string,
  sealedAnew: readonly CredentialOutcome[],
  tree: ReadonlyMap<string, string>,
): Promise<FreshValuesFollowUp> {
  const reader = new FsRepoReader(dir);
  const descriptor = parsePlatformDescriptor(await reader.read(PLATFORM_DESCRIPTOR_PATH));
  const followUp = await freshValuesFollowUp(reader, { gitopsPath, descriptor, rotated: sealedAnew, tree });
  await writeTree(dir, followUp.files);
  return followUp;
}
