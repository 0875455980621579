/**
 * The forges `pull_request` delivery speaks to, described once. Every list of
 * forges (the wire schema's enum, the runner's `--forge`, the dashboard's
 * picker, its links and request labels, the default API URLs) is derived from
 * this table; the client each forge is reached through is registered beside
 * its implementation in `delivery/forge-clients.ts`, keyed by the same names.
 * Pure, with no imports: the dashboard reads it too.
 */

/** What the product knows about one forge, apart from the client that calls its API. */
export interface ForgeDescriptor {
  /** How people write its name: `GitHub`. */
  readonly displayName: string;
  /** The name the dashboard's forge picker shows (may name compatible forks). */
  readonly pickerLabel: string;
  /** Hosts recognised by name (public instances, and self-hosted ones with the forge's name in the host); the host is lower-case. */
  recognisesHost(host: string): boolean;
  /** The API it serves next to a repository on `host`. */
  defaultApiUrl(host: string): string;
  /** The web path of a commit, between the repository's page and the sha. */
  readonly commitPath: string;
  /** How it prefixes a request's number: `#12`, GitLab's `!12`. */
  readonly requestPrefix: string;
  /**
   * Whether a GitHub App can stand in for a token (`repository.credentials.github_app`,
   * `SCAFFOLD_GITHUB_APP_*`, the service's `SCAFFOLD_FORGE_GITHUB_APP_*`). Every forge takes a token.
   */
  readonly acceptsGithubApp: boolean;
  /** What it says when a branch protection turns a direct push down (matched against git's error). */
  readonly protectedPushRefusal: RegExp;
}

export const FORGE_DESCRIPTORS = {
  github: {
    displayName: 'GitHub',
    pickerLabel: 'GitHub',
    recognisesHost: (host) => host === 'github.com' || host.startsWith('github.'),
    // GitHub.com's API lives on its own host; GitHub Enterprise Server's under /api/v3.
    defaultApiUrl: (host) => (host === 'github.com' ? 'https://api.github.com' : `https://${host}/api/v3`),
    commitPath: '/commit/',
    requestPrefix: '#',
    acceptsGithubApp: true,
    protectedPushRefusal: /GH006|protected branch/i,
  },
  gitlab: {
    displayName: 'GitLab',
    pickerLabel: 'GitLab',
    recognisesHost: (host) => host === 'gitlab.com' || host.startsWith('gitlab.'),
    // gitbeaker takes the host and adds /api/v4 itself.
    defaultApiUrl: (host) => `https://${host}`,
    commitPath: '/-/commit/',
    requestPrefix: '!',
    acceptsGithubApp: false,
    protectedPushRefusal: /not allowed to push code to protected/i,
  },
  gitea: {
    displayName: 'Gitea',
    pickerLabel: 'Gitea / Forgejo',
    recognisesHost: (host) => host === 'codeberg.org' || host === 'gitea.com' || host.startsWith('gitea.') || host.startsWith('forgejo.'),
    defaultApiUrl: (host) => `https://${host}/api/v1`,
    commitPath: '/commit/',
    requestPrefix: '#',
    acceptsGithubApp: false,
    protectedPushRefusal: /protected branch/i,
  },
} as const satisfies Record<string, ForgeDescriptor>;

export type ForgeName = keyof typeof FORGE_DESCRIPTORS;

/** The forges' names in the table's order (a tuple, as zod's enum wants one). */
export const FORGES = Object.keys(FORGE_DESCRIPTORS) as unknown as readonly [ForgeName, ...ForgeName[]];

/** `forge`'s descriptor. */
export function forgeDescriptor(forge: ForgeName): ForgeDescriptor {
  return FORGE_DESCRIPTORS[forge];
}

/** Whether `value` names a forge of the table. */
export function isForgeName(value: string): value is ForgeName {
  return Object.hasOwn(FORGE_DESCRIPTORS, value);
}

/** The forge a repository host is recognised as, if any. */
export function forgeOfHost(host: string): ForgeName | undefined {
  const lower = host.toLowerCase();
  return FORGES.find((forge) => FORGE_DESCRIPTORS[forge].recognisesHost(lower));
}

/** The forges' names as a sentence lists them: `github, gitlab or gitea`. */
export function forgeNameList(forges: readonly ForgeName[] = FORGES): string {
  return forges.length < 2 ? forges.join('') : `${forges.slice(0, -1).join(', ')} or ${forges.at(-1)!}`;
}

/** The forges a GitHub App works with. */
export const GITHUB_APP_FORGES: readonly ForgeName[] = FORGES.filter((forge) => FORGE_DESCRIPTORS[forge].acceptsGithubApp);
