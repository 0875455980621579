/**
 * Links from a run's commits to the repository's web pages, when the host is
 * one whose URL shapes are known: GitHub (`/commit/<sha>`), GitLab
 * (`/-/commit/<sha>`) and Gitea or Forgejo (`/commit/<sha>`, like GitHub).
 * Anything else (a file:// repository, an unknown host) gets no link rather
 * than a guessed one.
 */
import type { ForgeName } from '../../src/model/defaults.js';

export type Forge = ForgeName;

/** Hosts recognised by name; self-hosted ones are recognised by a forge's name in the host. */
function forgeOf(host: string): Forge | undefined {
  if (host === 'github.com' || host.startsWith('github.')) return 'github';
  if (host === 'gitlab.com' || host.startsWith('gitlab.')) return 'gitlab';
  if (host === 'codeberg.org' || host === 'gitea.com' || host.startsWith('gitea.') || host.startsWith('forgejo.')) return 'gitea';
  return undefined;
}

/** The repository's web address (https, no `.git`, no credentials), or undefined when the host is not known. */
export function repositoryWebUrl(url: string): { readonly base: string; readonly forge: Forge } | undefined {
  let host: string;
  let path: string;
  const scp = /^(?:[^@/]+@)?([^:/]+):(?!\/)(.+)$/.exec(url);
  try {
    if (scp !== null && !url.includes('://')) {
      host = scp[1] ?? '';
      path = `/${scp[2] ?? ''}`;
    } else {
      const parsed = new URL(url);
      if (!['https:', 'http:', 'ssh:', 'git:'].includes(parsed.protocol)) return undefined;
      host = parsed.hostname;
      path = parsed.pathname;
    }
  } catch {
    return undefined;
  }
  const forge = forgeOf(host.toLowerCase());
  const clean = path.replace(/\.git\/?$/, '').replace(/\/+$/, '');
  // Owner and name at least; nothing that could leave the path.
  if (forge === undefined || !/^(\/[A-Za-z0-9._-]+){2,}$/.test(clean)) return undefined;
  return { base: `https://${host.toLowerCase()}${clean}`, forge };
}

/** The web page of one commit, or undefined when the host is not known. */
export function commitUrl(repositoryUrl: string, sha: string): string | undefined {
  const web = repositoryWebUrl(repositoryUrl);
  if (web === undefined || !/^[0-9a-f]{7,64}$/.test(sha)) return undefined;
  return `${web.base}${web.forge === 'gitlab' ? '/-/commit/' : '/commit/'}${sha}`;
}
