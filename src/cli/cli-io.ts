/**
 * What every `generate-gitops-env` command shares: where progress goes, how
 * files named by flags are read, and how a flag's value is checked.
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ValidationError } from '../errors.js';
import { readInputFile } from '../read-input-file.js';
import { parseSealingCertificate, type SealingCertificate } from '../sealing/sealing-certificate.js';

/** Progress and notes go to stderr, so stdout stays the command's result. */
export const say = (line = ''): void => {
  process.stderr.write(`${line}\n`);
};

/** The certificate named by `--cert`. */
export async function readCertificate(path: string): Promise<SealingCertificate> {
  return parseSealingCertificate(await readInputFile(path, '--cert'), '--cert');
}

/** All of standard input; refuses a terminal, where the user would wait on nothing. */
export async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new ValidationError([{ field: 'stdin', message: 'expected a Secret manifest on standard input' }]);
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The absolute path of the directory `--repo` (or `flag`) names. A missing one
 * is bad input (exit 2), not a transient failure of the git it would be given to.
 */
export async function existingDirectory(path: string, flag = '--repo'): Promise<string> {
  const absolute = resolve(path);
  const info = await stat(absolute).catch(() => undefined);
  if (info === undefined) throw new ValidationError([{ field: flag, message: `${path} does not exist` }]);
  if (!info.isDirectory()) throw new ValidationError([{ field: flag, message: `${path} is not a directory` }]);
  return absolute;
}
