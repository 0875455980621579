/** Author and committer identities as native git takes them. */
import { ValidationError } from '../errors.js';
import type { GitIdentity } from '../run/ports.js';

export const DEFAULT_IDENTITY: GitIdentity = { name: 'gitops-scaffolder', email: 'gitops-scaffolder@localhost' };

export function assertIdentity(identity: GitIdentity, field: string): void {
  // git would silently drop <, > and newlines, producing an identity nobody asked for.
  for (const [key, value] of [
    ['name', identity.name],
    ['email', identity.email],
  ] as const) {
    if (value.trim().length === 0 || /[<>\r\n\0]/.test(value)) {
      throw new ValidationError([{ field: `${field}.${key}`, message: 'must be non-empty without <, > or line breaks' }]);
    }
  }
}

export function identityEnv(author: GitIdentity, committer: GitIdentity): Record<string, string> {
  return {
    GIT_AUTHOR_NAME: author.name,
    GIT_AUTHOR_EMAIL: author.email,
    GIT_COMMITTER_NAME: committer.name,
    GIT_COMMITTER_EMAIL: committer.email,
  };
}
