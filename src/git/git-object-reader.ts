/**
 * RepoReader over a clone's git objects, for the service's sources (catalog,
 * graph, fleet, dry run): the commit is at hand, so nothing on disk is opened.
 * The files are the index entries git checked out (`ls-files --sparse`: the
 * sparse cone, exactly what a reader of the work tree would see) and their
 * content comes from `git cat-file --batch`. A symbolic link is only a blob of
 * mode 120000 here and a submodule a gitlink (160000): neither is followed,
 * both are refused by their repository path, so no chain of links, FIFO or
 * host path can be reached whatever the link says.
 */
import { ValidationError } from '../errors.js';
import { assertRepoPath } from '../gitops/file-tree.js';
import type { RepoReader } from '../gitops/repo-reader.js';
import { runGit, spawnGitProcess } from './git-process.js';

const LINK = '120000';
const GITLINK = '160000';

/** The one refusal of a link or submodule, by its repository path only. */
export function gitLinkError(path: string, mode: string): ValidationError {
  const what = mode === GITLINK ? 'a submodule (gitlink)' : 'a symbolic link';
  return new ValidationError([{ field: 'repository', message: `${path} is ${what}; the repository may hold only files and directories here` }]);
}

interface Entry {
  readonly mode: string;
  readonly object: string;
}

/** Reads one clone's checked-out commit from its object store. Call {@link close} when done. */
export class GitObjectRepoReader implements RepoReader {
  #entries: Promise<Map<string, Entry>> | undefined;
  #sorted: string[] | undefined;
  #batch: CatFileBatch | undefined;

  /** @param dir the clone's work tree (its `.git` holds the index and objects) */
  constructor(private readonly dir: string) {}

  #index(): Promise<Map<string, Entry>> {
    return (this.#entries ??= (async () => {
      const listed = await runGit(['ls-files', '--stage', '-t', '-z', '--sparse'], { cwd: this.dir, env: { GIT_CEILING_DIRECTORIES: this.dir } });
      const entries = new Map<string, Entry>();
      for (const record of listed.stdout.split('\0')) {
        // "<tag> <mode> <object> <stage>\t<path>"; S is outside the sparse cone (not checked out).
        const match = /^(\S) (\d{6}) ([0-9a-f]+) \d\t(.+)$/s.exec(record);
        if (match === null) continue;
        const [, tag, mode, object, path] = match as unknown as [string, string, string, string, string];
        if (tag === 'S' || mode === '040000') continue;
        entries.set(path, { mode, object });
      }
      this.#sorted = [...entries.keys()].sort();
      return entries;
    })());
  }

  /** The link or gitlink at `path` or at one of its parents, if any. */
  #linkOnPath(entries: Map<string, Entry>, path: string): [string, Entry] | undefined {
    const parts = path.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const prefix = parts.slice(0, i).join('/');
      const entry = entries.get(prefix);
      if (entry !== undefined && (entry.mode === LINK || entry.mode === GITLINK)) return [prefix, entry];
    }
    return undefined;
  }

  async read(path: string): Promise<string | undefined> {
    return (await this.readBytes(path))?.toString('utf8');
  }

  /** The file's bytes, or undefined when the commit has no such file. */
  async readBytes(path: string): Promise<Buffer | undefined> {
    const entries = await this.#index();
    const link = this.#linkOnPath(entries, assertRepoPath(path));
    if (link !== undefined) throw gitLinkError(link[0], link[1].mode);
    const entry = entries.get(path);
    if (entry === undefined) return undefined;
    this.#batch ??= new CatFileBatch(this.dir);
    return this.#batch.blob(entry.object);
  }

  async list(dir: string): Promise<string[]> {
    const prefix = dir === '' || dir === '.' ? '' : `${assertRepoPath(dir.replace(/\/+$/, ''))}/`;
    const entries = await this.#index();
    if (prefix !== '') {
      const link = this.#linkOnPath(entries, prefix.slice(0, -1));
      if (link !== undefined) throw gitLinkError(link[0], link[1].mode);
    }
    const files: string[] = [];
    for (const path of this.#sorted ?? []) {
      if (!path.startsWith(prefix)) continue;
      const { mode } = entries.get(path) as Entry;
      if (mode === LINK || mode === GITLINK) throw gitLinkError(path, mode);
      files.push(path);
    }
    return files;
  }

  async isDirectory(path: string): Promise<boolean> {
    const entries = await this.#index();
    const trimmed = assertRepoPath(path.replace(/\/+$/, ''));
    const link = this.#linkOnPath(entries, trimmed);
    if (link !== undefined) throw gitLinkError(link[0], link[1].mode);
    const prefix = `${trimmed}/`;
    return (this.#sorted ?? []).some((p) => p.startsWith(prefix));
  }

  /** Ends the `cat-file` process, if one was started. */
  close(): void {
    this.#batch?.close();
    this.#batch = undefined;
  }
}

/** Runs `fn` with a reader over the clone at `dir`, and ends the reader afterwards. */
export async function withGitObjectReader<T>(dir: string, fn: (reader: GitObjectRepoReader) => Promise<T>): Promise<T> {
  const reader = new GitObjectRepoReader(dir);
  try {
    return await fn(reader);
  } finally {
    reader.close();
  }
}

/** One `git cat-file --batch`, answering requests in the order they were asked. */
class CatFileBatch {
  readonly #child;
  readonly #waiting: { resolve: (bytes: Buffer | undefined) => void; reject: (error: Error) => void }[] = [];
  #buffer: Buffer = Buffer.alloc(0);
  #failure: Error | undefined;

  constructor(dir: string) {
    this.#child = spawnGitProcess(['cat-file', '--batch'], dir);
    this.#child.stdin.on('error', () => undefined);
    this.#child.on('error', (error) => this.#fail(new Error(`git cat-file could not be started: ${error.message}`)));
    this.#child.on('close', () => this.#fail(new Error('git cat-file ended before it answered')));
    this.#child.stdout.on('data', (chunk: Buffer) => {
      this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
      this.#drain();
    });
  }

  blob(object: string): Promise<Buffer | undefined> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      this.#waiting.push({ resolve, reject });
      this.#child.stdin.write(`${object}\n`);
    });
  }

  /** Hands out every complete answer in the buffer. */
  #drain(): void {
    for (;;) {
      const eol = this.#buffer.indexOf(10);
      if (eol < 0 || this.#waiting.length === 0) return;
      const header = this.#buffer.subarray(0, eol).toString('utf8');
      const [, type, size] = header.split(' ');
      if (type === undefined || size === undefined) {
        // "<object> missing": nothing follows the header.
        this.#buffer = this.#buffer.subarray(eol + 1);
        this.#waiting.shift()?.resolve(undefined);
        continue;
      }
      const length = Number(size);
      if (this.#buffer.length < eol + 1 + length + 1) return;
      const content = Buffer.from(this.#buffer.subarray(eol + 1, eol + 1 + length));
      this.#buffer = this.#buffer.subarray(eol + 1 + length + 1);
      this.#waiting.shift()?.resolve(type === 'blob' ? content : undefined);
    }
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    for (const waiting of this.#waiting.splice(0)) waiting.reject(this.#failure);
  }

  close(): void {
    this.#failure ??= new Error('the reader was closed');
    this.#child.stdin.end();
    this.#child.kill();
  }
}
