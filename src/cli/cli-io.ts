/**
 * What every `generate-gitops-env` command shares: where progress goes, how
 * files named by flags are read, and how a flag's value is checked.
 */
import { InvalidArgumentError } from 'commander';
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

/** A commander argument parser accepting one of `values`, naming `flag` otherwise. */
export function choice<T extends string>(values: readonly T[], flag: string) {
  return (value: string): T => {
    if (!(values as readonly string[]).includes(value)) throw new InvalidArgumentError(`${flag} must be one of ${values.join(', ')}`);
    return value as T;
  };
}
