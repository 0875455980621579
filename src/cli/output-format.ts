/**
 * `-o json|yaml`, as kubectl and flux spell it, for the commands whose output
 * is data: the same object a program would read, printed as JSON or YAML
 * instead of the human text.
 */
import { Option } from 'commander';
import { stringify } from 'yaml';

/** The formats of `-o`: text is the human default. */
export const OUTPUT_FORMATS = ['text', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** The `-o, --output` option, `text` by default. */
export function outputOption(): Option {
  return new Option('-o, --output <format>', 'print the result as data: json or yaml').choices(OUTPUT_FORMATS).default('text');
}

/** `data` as JSON (two-space indent) or YAML, ending with a newline. */
export function formatData(data: unknown, format: Exclude<OutputFormat, 'text'>): string {
  return format === 'json' ? `${JSON.stringify(data, null, 2)}\n` : stringify(data, { lineWidth: 0 });
}
