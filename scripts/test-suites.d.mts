/** The repository's root directory. */
export const REPO_ROOT: string;
/** Builtins and packages (a trailing `/`: a scope) a unit test may not reach. */
export const UNIT_FORBIDDEN: readonly string[];
/** Every *.test.ts under `roots` (files or directories), sorted. */
export function testFilesUnder(roots: readonly string[]): string[];
/** The import chain from `file` to a forbidden module or a test harness, or undefined when it reaches none. */
export function edgeReachedBy(file: string): string[] | undefined;
/** The test files under `roots` (default src and test) by suite, repository-relative. */
export function classifyTests(roots?: readonly string[]): { unit: string[]; integration: string[]; e2e: string[] };
