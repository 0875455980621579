#!/usr/bin/env node
/**
 * The `gitops-scaffolder` binary: `serve` runs the HTTP service
 * (start-service.ts, loaded only then), `scaffold` the embedded main job.
 * `--help` and `--version` load neither: nothing is loaded that the command
 * does not use.
 */
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Command, CommanderError } from 'commander';
import { ValidationError } from './errors.js';
import { packageVersion } from './package-paths.js';
import { registerScaffoldCommand } from './scaffold-command.js';
import { registerCompletionCommand } from './cli/completion-command.js';
import { requiredFlagsHelp } from './cli/required-flags-help.js';
import { applyCliConventions, unknownFlagError } from './cli/cli-conventions.js';
import type { ServiceConfig } from './service/service-config.js';
import type { RunningService, ServePlugins, StartServiceOptions } from './start-service.js';

export type { RunningService, ServePlugins, StartServiceOptions } from './start-service.js';

/**
 * Starts the service with `config` (start-service.ts, loaded on first use).
 * @throws UnavailableError when the database or the Kubernetes API cannot be reached
 */
export async function startService(config: ServiceConfig, options: StartServiceOptions = {}): Promise<RunningService> {
  const service = await import('./start-service.js');
  return service.startService(config, options);
}

/** The command-line program; `plugins` lets the generator owner add implementations. */
export function buildProgram(plugins?: ServePlugins): Command {
  const program = new Command('gitops-scaffolder')
    .description("Writes a new cluster's Flux tree into Git and pushes it: the HTTP service.")
    .version(packageVersion())
    .configureHelp(requiredFlagsHelp)
    // Usage errors exit 2 like the other binaries, not commander's 1 (see main()).
    .exitOverride();
  program
    .command('serve')
    .description('Run the HTTP service (configuration from the environment: PORT, API_TOKENS, DATABASE_URL, EXECUTOR, …; a flag wins over its variable)')
    .option('--port <port>', 'port to listen on (PORT)')
    .option('--host <address>', 'address to listen on (HOST)')
    .option('--data-dir <dir>', 'where embedded mode keeps its database, repository, key and token (DATA_DIR)')
    .action(async (flags: { port?: string; host?: string; dataDir?: string }) => {
      // The flags are the same settings as their variables, checked by the same schema (a bad --port names PORT).
      const fromFlags = { PORT: flags.port, HOST: flags.host, DATA_DIR: flags.dataDir };
      const { loadServiceConfig } = await import('./service/service-config.js');
      const config = loadServiceConfig({ ...process.env, ...Object.fromEntries(Object.entries(fromFlags).filter(([, v]) => v !== undefined)) });
      const running = await startService(config, plugins ? { plugins } : {});
      let signals = 0;
      const stop = (signal: NodeJS.Signals): void => {
        signals++;
        if (signals > 1) process.exit(1); // a second signal: stop waiting
        process.stderr.write(`gitops-scaffolder: ${signal} received, shutting down\n`);
        void running.close().then(() => process.exit(0));
      };
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
    });
  registerScaffoldCommand(program);
  registerCompletionCommand(program);
  return applyCliConventions(program);
}

/** Runs the CLI; configuration errors exit 2 with one line per bad variable. */
export async function main(argv: readonly string[] = process.argv): Promise<void> {
  try {
    const program = buildProgram();
    const unknown = unknownFlagError(program, argv.slice(2));
    if (unknown !== undefined) {
      process.stderr.write(`${unknown}\n`);
      process.exit(2);
    }
    await program.parseAsync([...argv]);
  } catch (error) {
    // commander already printed the usage problem, the help or the version.
    if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? 0 : 2);
    if (error instanceof ValidationError) {
      process.stderr.write(`gitops-scaffolder: invalid configuration:\n${error.issues.map((i) => `  ${i.field}: ${i.message}`).join('\n')}\n`);
      process.exit(2);
    }
    process.stderr.write(`gitops-scaffolder: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}

// Run only when executed (also through an npm bin symlink), not when imported.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  void main();
}
