/**
 * Which kubeconfigs a caller may hand the product. A kubeconfig is more than
 * data: client-node runs `users[].user.exec` commands, calls `auth-provider`
 * plugins and reads `tokenFile`, `client-certificate`, `client-key` and
 * `certificate-authority` from the file system of whatever host loads it. A
 * caller's kubeconfig would run those on the runner's host, so only inline
 * data is accepted: every field outside the lists below is refused, by name,
 * before anything runs.
 */
import { isAlias, isMap, isSeq, parseDocument, type Document } from 'yaml';
import type { FieldIssue } from '../errors.js';

const TOP_LEVEL = new Set(['apiVersion', 'kind', 'clusters', 'contexts', 'users', 'current-context', 'preferences', 'extensions']);
/** Per list: the entry's own keys, and the keys allowed inside its body (`cluster`, `user`, `context`). */
const ENTRIES: Readonly<Record<string, { body: string; allowed: ReadonlySet<string> }>> = {
  clusters: { body: 'cluster', allowed: new Set(['server', 'certificate-authority-data', 'insecure-skip-tls-verify', 'tls-server-name', 'extensions']) },
  users: { body: 'user', allowed: new Set(['token', 'client-certificate-data', 'client-key-data', 'username', 'password', 'extensions']) },
  contexts: { body: 'context', allowed: new Set(['cluster', 'user', 'namespace', 'extensions']) },
};
/** Why the usual offenders are refused, so the message tells the caller what to send instead. */
const REASONS: Readonly<Record<string, string>> = {
  exec: 'runs a command on the host; put a token in users[].user.token instead',
  'auth-provider': 'runs an authentication plugin on the host; put a token in users[].user.token instead',
  tokenFile: 'reads a file on the host; put the token itself in users[].user.token',
  'client-certificate': 'reads a file on the host; use client-certificate-data',
  'client-key': 'reads a file on the host; use client-key-data',
  'certificate-authority': 'reads a file on the host; use certificate-authority-data',
  'proxy-url': 'sends the traffic through a proxy of the caller\'s choosing; not supported',
};
/** More aliases than any real kubeconfig has: the rest is an alias bomb. */
const MAX_ALIASES = 50;

function reasonFor(key: string): string {
  return REASONS[key] ?? 'is not supported: only inline data (server, certificate-authority-data, token, client-certificate-data, client-key-data) is accepted';
}

function keysOf(node: unknown): { key: string; value: unknown }[] {
  if (!isMap(node)) return [];
  return node.items.map((pair) => ({ key: String((pair.key as { value?: unknown } | null)?.value ?? pair.key), value: pair.value }));
}

function countAliases(doc: Document): number {
  let count = 0;
  const visit = (node: unknown): void => {
    if (isAlias(node)) count++;
    else if (isMap(node)) for (const pair of node.items) visit(pair.value);
    else if (isSeq(node)) for (const item of node.items) visit(item);
  };
  visit(doc.contents);
  return count;
}

/**
 * The fields of a kubeconfig that would make its loader run a command or read
 * a local file, or that this product does not accept; empty when it is plain
 * inline data. Messages name fields, never values.
 */
export function kubeconfigIssues(text: string, field: string): FieldIssue[] {
  const doc = parseDocument(text, { uniqueKeys: false });
  if (doc.errors.length > 0) {
    const at = doc.errors[0]?.linePos?.[0];
    return [{ field, message: `not valid YAML${at ? ` at line ${at.line}, column ${at.col}` : ''}` }];
  }
  if (countAliases(doc) > MAX_ALIASES) return [{ field, message: `uses more than ${MAX_ALIASES} YAML aliases` }];
  if (!isMap(doc.contents)) return [{ field, message: 'must be a YAML mapping (apiVersion: v1, kind: Config)' }];
  const issues: FieldIssue[] = [];
  for (const { key, value } of keysOf(doc.contents)) {
    if (!TOP_LEVEL.has(key)) {
      issues.push({ field, message: `${key} is not a kubeconfig field this service accepts` });
      continue;
    }
    const entry = ENTRIES[key];
    if (entry === undefined) continue;
    if (!isSeq(value)) continue; // the loader reports a wrong shape with its own message
    value.items.forEach((item, index) => {
      for (const { key: entryKey, value: body } of keysOf(item)) {
        if (entryKey === 'name') continue;
        if (entryKey !== entry.body) {
          issues.push({ field, message: `${key}[${index}].${entryKey} is not a kubeconfig field this service accepts` });
          continue;
        }
        for (const { key: bodyKey } of keysOf(body)) {
          if (!entry.allowed.has(bodyKey)) issues.push({ field, message: `${key}[${index}].${entry.body}.${bodyKey} ${reasonFor(bodyKey)}` });
        }
      }
    });
  }
  return issues;
}
