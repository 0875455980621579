/**
 * The git tree id of one directory as staged in the index, computed in-process
 * from `git ls-files -s -z` output instead of asking git to write it.
 *
 * A pass commit's MAC covers the tree it stages at `clusters/<cluster>`.
 * Asking git means `git write-tree` (then `ls-tree`), and in git 2.39 (this
 * project's image) `write-tree` is not sparse-index aware: it expands the
 * sparse index to every file of every cluster first, ~22 ms of CPU per commit
 * at 1,000 clusters. `git ls-files --sparse -s -z -- clusters/<c>/` reads the
 * sparse index as it is, and the cluster being committed lies inside the
 * sparse cone, so all of its files come back as ordinary entries; hashing them
 * the way git hashes tree objects gives the same id and writes nothing.
 *
 * Limits, each refused or documented rather than guessed at:
 * - a sparse-directory entry (`040000 … dir/`) only names a tree git already
 *   has, it does not say what is in it: refused, the caller asks git instead;
 * - an unmerged index (stages 1–3) has no tree: refused;
 * - an intent-to-add entry (`git add -N`) prints like a staged empty file but
 *   git leaves it out of the tree; nothing here stages with `-N`;
 * - names arrive as a JavaScript string and are hashed as UTF-8, so a path git
 *   printed in another encoding would not round-trip (ours are ASCII).
 */
import { createHash } from 'node:crypto';

/** The modes an index entry can have (regular, executable, symlink, gitlink); trees are not index entries. */
export type IndexMode = '100644' | '100755' | '120000' | '160000';

/** One stage-0 index entry as `git ls-files -s` prints it. */
export interface StagedEntry {
  readonly mode: IndexMode;
  /** Hex object id: 40 digits (sha1) or 64 (sha256). */
  readonly oid: string;
  /** Slash-separated path from the repository root, no trailing slash. */
  readonly path: string;
}

const INDEX_MODES: ReadonlySet<string> = new Set<IndexMode>(['100644', '100755', '120000', '160000']);
// `<mode> SP <oid> SP <stage> TAB <path>`; the path is taken verbatim (with -z git neither quotes nor escapes it).
const RECORD = /^([0-7]{6}) ([0-9a-f]{40}|[0-9a-f]{64}) ([0-9]+)\t([^\0]+)$/;
const HEX_LENGTH = { sha1: 40, sha256: 64 } as const;

/**
 * Parses `git ls-files -s -z` output (records `<mode> SP <oid> SP <stage> TAB
 * <path>`, each ended by NUL) into stage-0 entries. Throws on a malformed
 * record, on an unmerged entry (stage 1–3), on a sparse-directory entry and on
 * any mode an index entry cannot have.
 */
export function parseStagedEntries(output: string): StagedEntry[] {
  const records = output.split('\0');
  // The last record is NUL-terminated too, leaving one empty piece; tolerate output whose final NUL was cut.
  if (records[records.length - 1] === '') records.pop();
  return records.map((record) => {
    const match = RECORD.exec(record);
    if (match === null) throw new Error(`malformed git ls-files -s record: ${JSON.stringify(record)}`);
    const [, mode = '', oid = '', stage = '', path = ''] = match;
    if (stage !== '0') throw new Error(`unmerged index entry (stage ${stage}) at ${JSON.stringify(path)}: an index with conflicts has no tree`);
    if (mode === '040000' && path.endsWith('/')) {
      throw new Error(`sparse-directory entry ${JSON.stringify(path)}: its contents are not in the index, only git can say what tree it holds`);
    }
    if (!INDEX_MODES.has(mode)) throw new Error(`index entry ${JSON.stringify(path)} has mode ${mode}, which no index entry can have`);
    checkPath(path);
    return { mode: mode as IndexMode, oid, path };
  });
}

/**
 * The id of the tree git would write for directory `prefix` (`clusters/eu-1`;
 * `''` for the root) from the staged entries below it, the same id
 * `git rev-parse $(git write-tree):<prefix>` prints. Entries outside `prefix/`
 * are ignored. `''` when no entry lies below `prefix` (git writes no empty
 * subtree, so there is nothing there; a file or gitlink at `prefix` itself is
 * not a tree either).
 */
export function stagedTreeId(entries: readonly StagedEntry[], prefix: string, objectFormat: 'sha1' | 'sha256'): string {
  if (prefix !== '') checkPath(prefix);
  const below = prefix === '' ? '' : `${prefix}/`;
  const root: Directory = new Map();
  let any = false;
  for (const entry of entries) {
    if (!entry.path.startsWith(below)) continue;
    if (!INDEX_MODES.has(entry.mode)) throw new Error(`index entry ${JSON.stringify(entry.path)} has mode ${entry.mode}, which no index entry can have`);
    if (entry.oid.length !== HEX_LENGTH[objectFormat] || !/^[0-9a-f]+$/.test(entry.oid)) {
      throw new Error(`index entry ${JSON.stringify(entry.path)} has object id ${JSON.stringify(entry.oid)}, not a ${objectFormat} id`);
    }
    checkPath(entry.path);
    place(root, entry.path.slice(below.length).split('/'), entry);
    any = true;
  }
  return any ? hashTree(root, objectFormat) : '';
}

/** A directory being assembled: a name maps to a file-like entry or to a subdirectory. */
type Directory = Map<string, StagedEntry | Directory>;

function place(directory: Directory, names: readonly string[], entry: StagedEntry): void {
  const [name = '', ...rest] = names;
  const existing = directory.get(name);
  if (rest.length === 0) {
    // Neither can happen in a valid index; a hand-built list could, and git would not write such a tree.
    if (existing !== undefined) throw new Error(`index entry ${JSON.stringify(entry.path)} collides with another entry at the same path`);
    directory.set(name, entry);
    return;
  }
  if (existing !== undefined && !(existing instanceof Map)) {
    throw new Error(`index entry ${JSON.stringify(entry.path)} lies below ${JSON.stringify(existing.path)}, which is not a directory`);
  }
  const sub: Directory = existing ?? new Map();
  directory.set(name, sub);
  place(sub, rest, entry);
}

function hashTree(directory: Directory, objectFormat: 'sha1' | 'sha256'): string {
  const items = [...directory].map(([name, value]) => {
    const isTree = value instanceof Map;
    const nameBytes = Buffer.from(name, 'utf8');
    return {
      // git sorts tree entries by name bytes, a subtree's name compared as if it ended in '/': so `a-` and `a.b`
      // come before the directory `a`, and `a0` after it. A gitlink is not a directory here, it sorts as a file.
      key: isTree ? Buffer.concat([nameBytes, Buffer.from('/')]) : nameBytes,
      // Trees store a subtree's mode as `40000`, without the leading zero the index and ls-tree print.
      mode: isTree ? '40000' : value.mode,
      nameBytes,
      oid: Buffer.from(isTree ? hashTree(value, objectFormat) : value.oid, 'hex'),
    };
  });
  items.sort((left, right) => Buffer.compare(left.key, right.key));
  const body = Buffer.concat(items.flatMap((item) => [Buffer.from(`${item.mode} `), item.nameBytes, Buffer.from([0]), item.oid]));
  return createHash(objectFormat)
    .update(Buffer.from(`tree ${body.length}\0`))
    .update(body)
    .digest('hex');
}

/** A path git could hold in its index: non-empty slash-separated names, none empty, `.` or `..`. */
function checkPath(path: string): void {
  for (const name of path.split('/')) {
    if (name === '' || name === '.' || name === '..' || name.includes('\0')) throw new Error(`not a path git can stage: ${JSON.stringify(path)}`);
  }
}
