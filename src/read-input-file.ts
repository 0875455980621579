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

/**
 * A secret from the environment: the file named by `NAME_FILE` (trimmed) wins,
 * else `NAME`; undefined when neither is set. The runner's and the service's rule.
 * @throws ValidationError when the file cannot be read (never its content)
 */
export async function secretFromEnvOrFile(env: Readonly<Record<string, string | undefined>>, name: string): Promise<string | undefined> {
  const file = env[`${name}_FILE`];
  if (file) return (await readInputFile(file, `${name}_FILE`)).trim();
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}
