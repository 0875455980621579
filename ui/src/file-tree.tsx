/**
 * The files of a dry run as a tree grouped by directory, following the WAI-ARIA
 * tree view pattern: one tab stop, arrow keys move, Right/Left open and close
 * directories, Home/End jump, Enter or Space selects a file.
 */
import type { JSX } from 'preact';
import { useMemo, useRef, useState } from 'preact/hooks';
import type { DryRunFile, FileChange } from './api';
import { ChangeBadge } from './components';

interface DirNode {
  readonly kind: 'dir';
  readonly name: string;
  readonly path: string;
  readonly children: TreeNode[];
  readonly counts: Record<FileChange, number>;
}
interface FileNode {
  readonly kind: 'file';
  readonly name: string;
  readonly path: string;
  readonly file: DryRunFile;
}
type TreeNode = DirNode | FileNode;

/** A visible row: the node, its depth and its place among its siblings. */
interface Row {
  readonly node: TreeNode;
  readonly level: number;
  readonly setSize: number;
  readonly position: number;
  readonly parent: string | undefined;
}

const emptyCounts = (): Record<FileChange, number> => ({ added: 0, modified: 0, removed: 0, unchanged: 0 });

/** Builds the tree under `root` (e.g. `clusters/eu-prod-1`); a file outside it hangs under `root` by its full directory. */
export function buildTree(files: readonly DryRunFile[], root: string): DirNode {
  const top: DirNode = { kind: 'dir', name: `${root}/`, path: root, children: [], counts: emptyCounts() };
  const dirs = new Map<string, DirNode>([[root, top]]);
  const parents = new Map<DirNode, DirNode>();
  const dirOf = (path: string): DirNode => {
    const existing = dirs.get(path);
    if (existing !== undefined) return existing;
    const slash = path.lastIndexOf('/');
    const inside = path.startsWith(`${root}/`);
    const parent = inside && slash > root.length ? dirOf(path.slice(0, slash)) : top;
    const node: DirNode = { kind: 'dir', name: `${inside ? path.slice(slash + 1) : path}/`, path, children: [], counts: emptyCounts() };
    parent.children.push(node);
    parents.set(node, parent);
    dirs.set(path, node);
    return node;
  };
  for (const file of files) {
    const slash = file.path.lastIndexOf('/');
    const dir = dirOf(slash < 0 ? root : file.path.slice(0, slash));
    dir.children.push({ kind: 'file', name: file.path.slice(slash + 1), path: file.path, file });
    for (let d: DirNode | undefined = dir; d !== undefined; d = parents.get(d)) d.counts[file.change]++;
  }
  const sort = (dir: DirNode) => {
    dir.children.sort((a, b) => (a.kind === b.kind ? a.name.localeCompare(b.name) : a.kind === 'dir' ? -1 : 1));
    for (const child of dir.children) if (child.kind === 'dir') sort(child);
  };
  sort(top);
  return top;
}

function visibleRows(root: DirNode, collapsed: ReadonlySet<string>): Row[] {
  const rows: Row[] = [];
  const walk = (node: TreeNode, level: number, setSize: number, position: number, parent: string | undefined) => {
    rows.push({ node, level, setSize, position, parent });
    if (node.kind === 'dir' && !collapsed.has(node.path))
      node.children.forEach((child, index) => walk(child, level + 1, node.children.length, index + 1, node.path));
  };
  walk(root, 1, 1, 1, undefined);
  return rows;
}

export function FileTree({
  files,
  root,
  selected,
  onSelect,
}: {
  files: readonly DryRunFile[];
  root: string;
  selected: string | null;
  onSelect: (path: string) => void;
}) {
  const tree = useMemo(() => buildTree(files, root), [files, root]);
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(new Set());
  const [focused, setFocused] = useState<string>(selected ?? root);
  const container = useRef<HTMLUListElement>(null);
  const rows = visibleRows(tree, collapsed);
  const focusedPath = rows.some((r) => r.node.path === focused) ? focused : root;

  const focusRow = (path: string) => {
    setFocused(path);
    // After the re-render the row has tabindex 0; focus it now (it exists already: only visibility changes re-render rows).
    const element = container.current?.querySelector<HTMLElement>(`[data-path="${CSS.escape(path)}"]`);
    element?.focus();
  };
  const toggle = (path: string, open?: boolean) => {
    setCollapsed((previous) => {
      const next = new Set(previous);
      const isOpen = !next.has(path);
      if (open ?? !isOpen) next.delete(path);
      else next.add(path);
      return next;
    });
  };

  const onKeyDown = (event: KeyboardEvent) => {
    const index = rows.findIndex((r) => r.node.path === focusedPath);
    const row = rows[index];
    if (row === undefined) return;
    const node = row.node;
    let handled = true;
    switch (event.key) {
      case 'ArrowDown':
        if (index + 1 < rows.length) focusRow((rows[index + 1] as Row).node.path);
        break;
      case 'ArrowUp':
        if (index > 0) focusRow((rows[index - 1] as Row).node.path);
        break;
      case 'Home':
        focusRow((rows[0] as Row).node.path);
        break;
      case 'End':
        focusRow((rows[rows.length - 1] as Row).node.path);
        break;
      case 'ArrowRight':
        if (node.kind === 'dir') {
          if (collapsed.has(node.path)) toggle(node.path, true);
          else if (node.children[0] !== undefined) focusRow(node.children[0].path);
        }
        break;
      case 'ArrowLeft':
        if (node.kind === 'dir' && !collapsed.has(node.path) && row.parent !== undefined) toggle(node.path, false);
        else if (row.parent !== undefined) focusRow(row.parent);
        break;
      case 'Enter':
      case ' ':
        if (node.kind === 'file') onSelect(node.path);
        else toggle(node.path);
        break;
      default:
        handled = false;
    }
    if (handled) event.preventDefault();
  };

  const renderNode = (row: Row | undefined, node: TreeNode, level: number): JSX.Element => {
    const tabIndex = node.path === focusedPath ? 0 : -1;
    if (node.kind === 'file') {
      return (
        <li
          key={node.path}
          role="treeitem"
          data-path={node.path}
          aria-level={level}
          aria-setsize={row?.setSize}
          aria-posinset={row?.position}
          aria-selected={node.path === selected ? 'true' : 'false'}
          tabIndex={tabIndex}
          class={`tree-file${node.path === selected ? ' selected' : ''}`}
          onClick={() => {
            setFocused(node.path);
            onSelect(node.path);
          }}
        >
          <ChangeBadge change={node.file.change} /> <span class="tree-name">{node.name}</span>
        </li>
      );
    }
    const open = !collapsed.has(node.path);
    const changed = node.counts.added + node.counts.modified + node.counts.removed;
    return (
      <li
        key={node.path}
        role="treeitem"
        data-path={node.path}
        aria-level={level}
        aria-setsize={row?.setSize}
        aria-posinset={row?.position}
        aria-expanded={open ? 'true' : 'false'}
        aria-labelledby={`tree-label-${node.path}`}
        tabIndex={tabIndex}
        class="tree-dir"
      >
        <span
          id={`tree-label-${node.path}`}
          class="tree-label"
          onClick={(event) => {
            event.stopPropagation();
            setFocused(node.path);
            toggle(node.path);
          }}
        >
          <span class="twisty" aria-hidden="true">
            {open ? '▾' : '▸'}
          </span>
          <span class="tree-name">{node.name}</span>
          <span class="tree-count">{changed === 0 ? 'no changes' : `${changed} changed`}</span>
        </span>
        {open && (
          <ul role="group">
            {node.children.map((child) =>
              renderNode(
                rows.find((r) => r.node.path === child.path),
                child,
                level + 1,
              ),
            )}
          </ul>
        )}
      </li>
    );
  };

  return (
    <ul
      class="tree"
      role="tree"
      aria-label="Files the scaffold would write"
      ref={container}
      onKeyDown={onKeyDown}
      onFocusCapture={(event) => {
        const path = (event.target as HTMLElement).dataset.path;
        if (path !== undefined && path !== focusedPath) setFocused(path);
      }}
    >
      {renderNode(rows[0], tree, 1)}
    </ul>
  );
}
