// No cycles between the folders of src/: every import, type-only ones included
// (a type that lives in the wrong folder is how a cycle starts), is an edge from
// the importing file's folder to the imported file's. A file directly under src/
// (errors.ts, logger.ts, the composition roots main.ts, cli.ts, runner-cli.ts)
// is a node of its own, so the roots may import every folder and every folder
// may import errors.ts. Run by `npm run lint`; exits 1 naming each cycle with
// the imports that make it.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'";]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

/** The node a file under `root` belongs to: its top folder, or the file itself at the top. */
function nodeOf(root, file) {
  const parts = relative(root, file).split(sep);
  return parts[0];
}

/**
 * The cycles between the folders of `root` (production files only: tests and
 * contract suites may import across), each with the imports that close it.
 * @returns one entry per strongly connected set of two or more folders
 */
export function folderCycles(root) {
  const files = readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.tsx?$/.test(e.name) && !/\.test\.tsx?$|\.contract\.ts$/.test(e.name))
    .map((e) => join(e.parentPath ?? e.path, e.name));
  const edges = new Map();
  const evidence = new Map();
  for (const file of files) {
    const from = nodeOf(root, file);
    for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const target = resolve(dirname(file), (match[1] ?? match[2]).replace(/\.js$/, '.ts'));
      if (relative(root, target).startsWith('..')) continue;
      const to = nodeOf(root, target);
      if (to === from) continue;
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from).add(to);
      const key = `${from} -> ${to}`;
      if (!evidence.has(key)) evidence.set(key, []);
      evidence.get(key).push(`${relative(root, file)} imports ${relative(root, target)}`);
    }
  }
  // Tarjan's strongly connected components.
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const cycles = [];
  let next = 0;
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) !== index.get(v)) return;
    const members = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      members.push(w);
    } while (w !== v);
    if (members.length < 2) return;
    members.sort();
    const imports = [];
    for (const a of members)
      for (const b of members) if (evidence.has(`${a} -> ${b}`)) imports.push(`${a} -> ${b}: ${evidence.get(`${a} -> ${b}`).slice(0, 3).join('; ')}`);
    cycles.push({ folders: members, imports });
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v);
  return cycles;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src');
  const cycles = folderCycles(root);
  if (cycles.length === 0) {
    console.log('folder-cycles: no cycles between the folders of src/');
  } else {
    for (const cycle of cycles) {
      console.error(`folder-cycles: ${cycle.folders.join(', ')} import each other:`);
      for (const line of cycle.imports) console.error(`  ${line}`);
    }
    console.error('Move the shared types or rule into the lower folder (model/, run/), or pass the dependency in as a port.');
    process.exit(1);
  }
}
