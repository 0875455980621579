/**
 * A branch protection as a forge enforces it, for a bare repository served on
 * loopback: a pre-receive hook refusing updates of `main` with GitHub's own
 * message (GH006), so delivery code sees what it would see from GitHub.
 */
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const PROTECT_MAIN = `#!/bin/sh
while read old new ref; do
  if [ "$ref" = refs/heads/main ]; then
    echo "error: GH006: Protected branch update failed for refs/heads/main." >&2
    exit 1
  fi
done
`;

/** Refuses every push to `main` of the bare repository at `bareDir`; other branches stay writable. */
export async function protectMain(bareDir: string): Promise<void> {
  await writeFile(join(bareDir, 'hooks', 'pre-receive'), PROTECT_MAIN);
  await chmod(join(bareDir, 'hooks', 'pre-receive'), 0o755);
}
