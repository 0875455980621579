/**
 * One spelling of a field's location for every finding, whichever checker
 * produced it, so a reader can grep for it: `spec.rules[0].host`,
 * `metadata.annotations["sealedsecrets.bitnami.com/cluster-wide"]`.
 */

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** Joins path segments: numbers become `[i]`, plain keys `.key`, other keys `["key"]`. */
export function fieldPath(segments: readonly (string | number)[]): string {
  let out = '';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}
