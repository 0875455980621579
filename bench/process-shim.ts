/**
 * Counts the git and kubectl processes this process starts, whoever starts
 * them (the git adapter, the kustomize builder, a reader's `cat-file`): a
 * directory of shims put first on PATH, each appending its parent's pid and
 * its arguments to a log and then exec'ing the real program. By default only
 * processes whose parent is this process or its spawn helper count, so git's own helpers
 * (upload-pack under the bench's git daemon, index-pack under a fetch) and the
 * bench's own setup commands in other processes do not; `anyParent` reads them
 * all (a runner's kubectl, whose parent is that runner process).
 *
 * git and kubectl spawned with a scrubbed environment still find the shims:
 * both the git adapter and the kustomize builder keep PATH.
 */
import { chmod, mkdir, readFile, truncate, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { exec, spawnHelperPids } from './support.js';

/** The processes of one kind, in the order they started. */
export interface Spawned {
  /** git's subcommand ("clone", "push"…) or kubectl's first argument. */
  readonly command: string;
  readonly args: readonly string[];
  /** The pid of the process that started it. */
  readonly parent: string;
}

export interface ProcessCounter {
  /** Forgets what was counted so far. */
  reset(): Promise<void>;
  /** What this process (or, with `anyParent`, any process) started since the last reset, by program. */
  read(options?: { readonly anyParent?: boolean }): Promise<{ readonly git: readonly Spawned[]; readonly kubectl: readonly Spawned[] }>;
  /** Takes the shims off PATH. */
  uninstall(): void;
}

async function which(program: string): Promise<string> {
  const { stdout } = await exec('sh', ['-c', `command -v ${program}`], { cwd: '/', env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' } });
  const found = stdout.trim();
  if (!found.startsWith('/')) throw new Error(`${program} not found on PATH`);
  return found;
}

/** The subcommand: the first argument that is not a global option (as git-process reports it). */
function subcommand(args: readonly string[]): string {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '-c' || arg === '-C') {
      i++;
      continue;
    }
    if (!arg.startsWith('-')) return arg;
  }
  return '(none)';
}

/** Installs shims for git and kubectl in `dir` and puts them first on this process's PATH. */
export async function installProcessCounter(dir: string, programs: readonly string[] = ['git', 'kubectl']): Promise<ProcessCounter> {
  await mkdir(dir, { recursive: true });
  const log = join(dir, 'spawned.log');
  await writeFile(log, '');
  for (const program of programs) {
    const real = await which(program);
    // One line per process: parent pid, program, arguments separated by US; then the real program in its place.
    // The line goes out in one write: with a printf per part, two processes starting at once merged their lines.
    const script =
      `#!/bin/sh\nrs=$(printf '\\036'); us=$(printf '\\037'); line="$PPID\${rs}${program}"\n` +
      `for a in "$@"; do line="$line\${us}$a"; done\nprintf '%s\\n' "$line" >> '${log}'\nexec '${real}' "$@"\n`;
    await writeFile(join(dir, program), script);
    await chmod(join(dir, program), 0o755);
  }
  const before = process.env['PATH'] ?? '';
  process.env['PATH'] = `${dir}${delimiter}${before}`;
  // This process's children are started by its spawn helper; a helper that was replaced is remembered.
  const parents = new Set([String(process.pid)]);
  const helpers = () => spawnHelperPids().forEach((pid) => parents.add(String(pid)));
  return {
    reset: () => {
      helpers();
      return truncate(log, 0);
    },
    read: async ({ anyParent = false } = {}) => {
      helpers();
      const out: Record<string, Spawned[]> = { git: [], kubectl: [] };
      for (const line of (await readFile(log, 'utf8')).split('\n').filter(Boolean)) {
        const [head = '', ...args] = line.split('\x1f');
        const [ppid = '', program = ''] = head.split('\x1e');
        if (!anyParent && !parents.has(ppid)) continue;
        (out[program] ??= []).push({ command: program === 'git' ? subcommand(args) : (args[0] ?? ''), args, parent: ppid });
      }
      return { git: out['git'] ?? [], kubectl: out['kubectl'] ?? [] };
    },
    uninstall: () => {
      process.env['PATH'] = before;
    },
  };
}
