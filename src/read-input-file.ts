/**
 * Reading a file a command-line flag or an environment variable names, for the
 * composition roots (`generate-gitops-env`, `scaffold-runner`,
 * `gitops-scaffolder scaffold`).
 */
import { readFile } from 'node:fs/promises';
import { ValidationError } from './errors.js';

/**
 * The file's text (UTF-8).
 *
 * @param field - the flag or variable that named the file (`--cert`, `SCAFFOLD_GIT_TOKEN_FILE`), reported as the field at fault
 * @throws ValidationError `cannot read <path>: <errno>` when the file cannot be read; never its content
 */
export async function readInputFile(path: string, field: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new ValidationError([{ field, message: `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}` }]);
  }
}
