/**
 * What every binary's command line does alike, as kubectl, helm and flux users
 * expect: a `version` subcommand beside `--version`, a one-line hint after a
 * usage error instead of the whole help, and an unknown flag reported first —
 * with the flag it was probably meant to be — rather than as the required flag
 * it failed to set (`--domian` is a typo of `--domain`, not a missing `--domain`).
 */
import type { Command } from 'commander';
import { closestName } from '../verify/closest-name.js';
import { packageVersion } from '../package-paths.js';

const commandPath = (command: Command): string => {
  const names: string[] = [];
  for (let c: Command | null = command; c !== null; c = c.parent) names.unshift(c.name());
  return names.join(' ');
};

/** Adds `version` and the one-line usage hints to `program` and each of its subcommands (call after registering them). */
export function applyCliConventions(program: Command): Command {
  if (program.commands.length > 0 && !program.commands.some((c) => c.name() === 'version')) {
    program
      .command('version')
      .description('Print the version')
      .action(() => {
        process.stdout.write(`${packageVersion()}\n`);
      });
  }
  const hint = (command: Command): void => {
    command.showHelpAfterError(`(run '${commandPath(command)} --help' for usage)`);
    for (const sub of command.commands) hint(sub);
  };
  hint(program);
  return program;
}

/**
 * The first flag in `args` (the arguments after the binary) that the command it
 * is given to does not know, as commander would word it, with a suggestion;
 * undefined when every flag is known. Only `--long` flags are checked: a short
 * flag's letters may be a value, and commander still reports those itself.
 */
export function unknownFlagError(program: Command, args: readonly string[]): string | undefined {
  let command = program;
  let at = 0;
  // Descend through subcommand names, as commander dispatches.
  while (at < args.length) {
    const next = command.commands.find((c) => c.name() === args[at] || c.aliases().includes(args[at] ?? ''));
    if (next === undefined) break;
    command = next;
    at++;
  }
  const known = new Set<string>(['--help', '--version']);
  for (let c: Command | null = command; c !== null; c = c.parent) {
    for (const option of c.options) {
      if (option.long !== undefined) known.add(option.long);
      // commander accepts `--no-x` for a boolean `--x` it declares as negatable.
      if (option.negate && option.long !== undefined) known.add(option.long);
    }
  }
  for (const arg of args.slice(at)) {
    if (arg === '--') break;
    if (!arg.startsWith('--')) continue;
    const flag = arg.split('=')[0]!;
    if (known.has(flag)) continue;
    const suggestion = closestName(
      flag.slice(2),
      [...known].map((k) => k.slice(2)),
    );
    // Never echo a value given with the flag (`--token=…`): it may be a secret.
    return `error: unknown option '${flag}'${suggestion === undefined ? '' : `\n(Did you mean --${suggestion}?)`}\n(run '${commandPath(command)} --help' for usage)`;
  }
  return undefined;
}
