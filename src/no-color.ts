/**
 * Whether output may be coloured: only on a terminal, and never when NO_COLOR
 * is set to anything but the empty string (https://no-color.org).
 */
export function colorAllowed(stream: { readonly isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  return stream.isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === '');
}

/** `text` wrapped in an ANSI SGR colour when `on`, else as it is. */
export function paint(on: boolean, code: number, text: string): string {
  return on ? `\u001b[${code}m${text}\u001b[0m` : text;
}
