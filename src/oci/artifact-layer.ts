/**
 * The content layer of a Flux OCI artifact: the repository's files as a
 * gzip-compressed tarball, byte-for-byte reproducible from the same files.
 *
 * source-controller extracts this layer with fluxcd/pkg/tar `Untar`, which
 * accepts regular files and directories only (a symlink fails the whole
 * extraction) and rejects names that are absolute or contain `../`
 * (https://github.com/fluxcd/pkg/blob/main/tar/untar.go). So the tarball holds
 * exactly those two kinds of entries, with validated repository-relative names.
 *
 * Reproducible means: entries sorted by name (every directory before its
 * contents), one fixed modification time, uid/gid 0 with no owner names, fixed
 * modes, and a gzip header without a timestamp or file name. The tar format is
 * POSIX ustar; a name that ustar cannot hold (non-ASCII, or longer than its
 * prefix/name fields) gets a POSIX pax extended header, which is equally fixed.
 */
import { promisify } from 'node:util';
import { constants as zlibConstants, gzip as gzipCallback } from 'node:zlib';
import { pack } from 'tar-stream';
import { ValidationError } from '../errors.js';
import { type FileTree, assertRepoPath } from '../gitops/file-tree.js';

const gzip = promisify(gzipCallback);

/** One file of the artifact. */
export interface ArtifactFile {
  /** Repository-relative POSIX path (validated with `assertRepoPath`). */
  readonly path: string;
  readonly content: Uint8Array;
  /** Archived with mode 0755 instead of 0644 (git's 100755). @default false */
  readonly executable?: boolean;
}

/** How to pack. */
export interface PackTreeOptions {
  /**
   * The modification time of every entry, as a Date or seconds since the Unix epoch.
   * @default 0 (1970-01-01T00:00:00Z)
   */
  readonly mtime?: Date | number;
}

const FILE_MODE = 0o644;
const EXECUTABLE_MODE = 0o755;
const DIRECTORY_MODE = 0o755;
/** RFC 1952 "unknown" operating system, as Go's compress/gzip writes it (Flux's own artifacts). */
const GZIP_OS_UNKNOWN = 0xff;

interface Entry {
  readonly name: string;
  readonly key: Buffer;
  readonly file?: { readonly content: Buffer; readonly mode: number };
}

function toFiles(files: FileTree | Iterable<ArtifactFile>): ArtifactFile[] {
  const out: ArtifactFile[] = [];
  for (const item of files as Iterable<ArtifactFile | readonly [string, string]>) {
    if (Array.isArray(item)) {
      const [path, content] = item as readonly [string, string];
      out.push({ path, content: Buffer.from(content, 'utf8') });
    } else {
      out.push(item as ArtifactFile);
    }
  }
  return out;
}

function entriesOf(files: readonly ArtifactFile[]): Entry[] {
  const byPath = new Map<string, ArtifactFile>();
  for (const file of files) {
    const path = assertRepoPath(file.path);
    if (path === '.' || path.endsWith('/')) {
      throw new ValidationError([{ field: 'path', message: `${JSON.stringify(path)} is not a file path` }]);
    }
    if (byPath.has(path)) throw new ValidationError([{ field: 'path', message: `${JSON.stringify(path)} is listed twice` }]);
    byPath.set(path, file);
  }
  const directories = new Set<string>();
  for (const path of byPath.keys()) {
    const segments = path.split('/');
    for (let i = 1; i < segments.length; i++) directories.add(segments.slice(0, i).join('/'));
  }
  const entries: Entry[] = [];
  for (const directory of directories) {
    if (byPath.has(directory)) {
      throw new ValidationError([{ field: 'path', message: `${JSON.stringify(directory)} is both a file and a directory` }]);
    }
    const name = `${directory}/`;
    entries.push({ name, key: Buffer.from(name, 'utf8') });
  }
  for (const [path, file] of byPath) {
    const content = Buffer.isBuffer(file.content) ? file.content : Buffer.from(file.content.buffer, file.content.byteOffset, file.content.byteLength);
    entries.push({ name: path, key: Buffer.from(path, 'utf8'), file: { content, mode: file.executable ? EXECUTABLE_MODE : FILE_MODE } });
  }
  // Byte order of the UTF-8 names: independent of locale and of JavaScript's
  // UTF-16 ordering. `dir/` is a prefix of everything inside it, so it sorts first.
  entries.sort((a, b) => Buffer.compare(a.key, b.key));
  return entries;
}

function mtimeOf(option: Date | number | undefined): Date {
  const date = option instanceof Date ? new Date(option.getTime()) : new Date((option ?? 0) * 1000);
  if (Number.isNaN(date.getTime()) || date.getTime() < 0) {
    throw new ValidationError([{ field: 'mtime', message: 'must be a time at or after the Unix epoch' }]);
  }
  // Tar stores whole seconds.
  return new Date(Math.floor(date.getTime() / 1000) * 1000);
}

function tarOf(entries: readonly Entry[], mtime: Date): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const tar = pack();
    const chunks: Buffer[] = [];
    tar.on('data', (chunk: unknown) => {
      chunks.push(chunk as Buffer);
    });
    tar.on('end', () => resolve(Buffer.concat(chunks)));
    tar.on('error', reject);
    const owner = { uid: 0, gid: 0, uname: '', gname: '', mtime };
    for (const entry of entries) {
      if (entry.file) tar.entry({ ...owner, name: entry.name, type: 'file', mode: entry.file.mode }, entry.file.content);
      else tar.entry({ ...owner, name: entry.name, type: 'directory', mode: DIRECTORY_MODE });
    }
    tar.finalize();
  });
}

/**
 * Packs files into the gzip-compressed tarball of a Flux content layer
 * (`application/vnd.cncf.flux.content.v1.tar+gzip`).
 *
 * The same set of files (in any order) and the same `mtime` give the same bytes
 * under the same Node.js zlib, hence the same layer digest.
 *
 * @param files a {@link FileTree} (UTF-8 contents) or any iterable of {@link ArtifactFile}
 * @throws ValidationError when a path could escape the repository, is listed
 *   twice, or is both a file and a directory; or when `mtime` is before 1970
 */
export async function packTree(files: FileTree | Iterable<ArtifactFile>, options: PackTreeOptions = {}): Promise<Buffer> {
  const mtime = mtimeOf(options.mtime);
  const tar = await tarOf(entriesOf(toFiles(files)), mtime);
  const compressed = await gzip(tar, { level: zlibConstants.Z_BEST_COMPRESSION });
  // zlib writes MTIME 0 and no FNAME already; the OS byte is platform dependent
  // (3 on Unix, 10 on Windows builds), so pin it. Not covered by the CRC.
  compressed[9] = GZIP_OS_UNKNOWN;
  return compressed;
}
