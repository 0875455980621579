/**
 * What a rotation run resealed, as its page lists it: folded from the run's
 * `credential` log events, the ones sealed anew (`generated`: a fresh value)
 * or re-encrypted by the cluster's controller (`reencrypted`: the same value).
 * The credentials a rotation left as they were (`kept`) are not listed. Pure,
 * so it is tested without a browser.
 */

/** What a log entry says of one credential: `LogEntry.credential` (log-events.ts), read from a `credential` event; structural, so this stays free of the browser. */
export interface CredentialReport {
  readonly namespace: string;
  readonly name: string;
  readonly action: string;
  readonly file?: string;
}

/** One resealed credential. */
export interface ResealedCredential {
  /** `namespace/name`, as `rotate --credential` and the API's `credentials` name it. */
  readonly credential: string;
  /** The SealedSecret's file, from the repository root. */
  readonly file?: string;
  /** How it was resealed, in words. */
  readonly how: string;
}

const RESEALED: Readonly<Record<string, string>> = {
  reencrypted: "same value, re-encrypted by the cluster's controller",
  generated: 'fresh value',
};

/** Each credential the run resealed, its latest report, sorted by namespace/name; empty before (or without) any. */
export function resealedCredentialsOf(entries: readonly { readonly credential?: CredentialReport }[]): ResealedCredential[] {
  const latest = new Map<string, ResealedCredential>();
  for (const { credential } of entries) {
    const how = credential === undefined ? undefined : RESEALED[credential.action];
    if (credential === undefined || how === undefined) continue;
    const key = `${credential.namespace}/${credential.name}`;
    latest.set(key, { credential: key, how, ...(credential.file === undefined ? {} : { file: credential.file }) });
  }
  return [...latest.values()].sort((a, b) => a.credential.localeCompare(b.credential));
}
