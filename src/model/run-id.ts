/**
 * What a run id may be: it becomes a directory name, a commit trailer
 * (`Scaffold-Id`), a ref name in the landing queue and a `git log --grep`
 * pattern, so no path separators, no line breaks, nothing a regexp reads
 * specially but ".".
 */
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export function isRunId(value: string): boolean {
  return RUN_ID.test(value);
}
