/**
 * What a run may name as its branch, checked at the edge (HTTP, CLI) before a
 * run is stored, so git never sees an option or a ref it would refuse.
 */
import { z } from 'zod';

/**
 * A branch name git accepts (`git check-ref-format --branch`): components
 * separated by "/", no "..", no "@{", none of space ~ ^ : ? * [ \ or control
 * characters, no component starting with "." or ending with ".lock", not
 * starting with "-" (git would read it as an option).
 */
export const branchSchema = z
  .string({ error: 'must be a string' })
  .min(1, 'must not be empty')
  .max(255, 'must be at most 255 characters')
  .superRefine((value, ctx) => {
    const fail = (message: string): void => {
      ctx.addIssue({ code: 'custom', message });
    };
    // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
    if (/[\x00-\x20~^:?*[\\\x7f]/.test(value)) return fail('must not contain spaces, control characters or any of ~ ^ : ? * [ \\');
    if (value.includes('..')) return fail('must not contain ".."');
    if (value.includes('@{') || value === '@') return fail('must not contain "@{" or be "@"');
    if (value.startsWith('-')) return fail('must not start with "-"');
    if (value.startsWith('/') || value.endsWith('/') || value.includes('//')) return fail('must not start or end with "/" or contain "//"');
    if (value.endsWith('.')) return fail('must not end with "."');
    for (const component of value.split('/')) {
      if (component.startsWith('.')) return fail('no "/"-separated part may start with "."');
      if (component.endsWith('.lock')) return fail('no "/"-separated part may end with ".lock"');
    }
  });
