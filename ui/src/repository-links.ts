/**
 * Links from a run's commits to the repository's web pages, when the host is
 * one whose URL shapes are known: a forge of `src/model/forges.ts` (GitHub's
 * `/commit/<sha>`, GitLab's `/-/commit/<sha>`, Gitea's or Forgejo's `/commit/<sha>`).
 * Anything else (a file:// repository, an unknown host) gets no link rather
 * than a guessed one.
 */
import { type ForgeName, forgeDescriptor, forgeOfHost } from '../../src/model/forges.js';

export type Forge = ForgeName;

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
  // Hosts recognised by name (the forge table's); self-hosted ones by a forge's name in the host.
  const forge = forgeOfHost(host.toLowerCase());
  const clean = path.replace(/\.git\/?$/, '').replace(/\/+$/, '');
  // Owner and name at least; nothing that could leave the path.
  if (forge === undefined || !/^(\/[A-Za-z0-9._-]+){2,}$/.test(clean)) return undefined;
  return { base: `https://${host.toLowerCase()}${clean}`, forge };
}

/** The web page of one commit, or undefined when the host is not known. */
export function commitUrl(repositoryUrl: string, sha: string): string | undefined {
  const web = repositoryWebUrl(repositoryUrl);
  if (web === undefined || !/^[0-9a-f]{7,64}$/.test(sha)) return undefined;
  return `${web.base}${forgeDescriptor(web.forge).commitPath}${sha}`;
}
