#!/usr/bin/env node
/**
 * Composition root of `generate-gitops-env`, the offline generator CLI: init a
 * platform repository, render a cluster's tree, verify a tree, draw its Flux
 * graph, seal a secret. Each command lives in its own file under cli/; this
 * file only registers them. Results go to stdout, progress and errors to stderr.
 */
import { Command, CommanderError } from 'commander';
import { isAppError } from './errors.js';
import { EXIT_BAD_INPUT, EXIT_OK, exitCodeOf } from './exit-codes.js';
import { packageVersion } from './package-paths.js';
import { say } from './cli/cli-io.js';
import { inFlagTerms } from './cli/flag-names.js';
import { registerCompletionCommand } from './cli/completion-command.js';
import { registerGraphCommand } from './cli/graph-command.js';
import { registerInitCommand } from './cli/init-command.js';
import { registerPublishCommand } from './cli/publish-command.js';
import { registerRenderCommand } from './cli/render-command.js';
import { registerSealCommand } from './cli/seal-command.js';
import { registerVerifyCommand } from './cli/verify-command.js';
import { registerClustersCommand } from './cli/clusters-command.js';
import { registerUpgradeCommand } from './cli/upgrade-command.js';
import { registerRemoveCommand } from './cli/remove-command.js';
import { registerRotateCommand } from './cli/rotate-command.js';
import { requiredFlagsHelp } from './cli/required-flags-help.js';
import { applyCliConventions, unknownFlagError } from './cli/cli-conventions.js';

function program(): Command {
  const cli = new Command('generate-gitops-env')
    .description("Render, verify and draw a cluster's Flux GitOps tree; seal secrets for its Sealed Secrets controller.")
    .version(packageVersion())
    .configureHelp(requiredFlagsHelp)
    .exitOverride()
    .configureOutput({ writeErr: (text) => process.stderr.write(text) });

  registerInitCommand(cli);
  registerRenderCommand(cli);
  registerVerifyCommand(cli);
  registerGraphCommand(cli);
  registerPublishCommand(cli);
  registerSealCommand(cli);
  registerClustersCommand(cli);
  registerUpgradeCommand(cli);
  registerRemoveCommand(cli);
  registerRotateCommand(cli);
  registerCompletionCommand(cli);

  return applyCliConventions(cli);
}

try {
  const cli = program();
  const unknown = unknownFlagError(cli, process.argv.slice(2));
  if (unknown !== undefined) {
    say(unknown);
    process.exitCode = EXIT_BAD_INPUT;
  } else {
    await cli.parseAsync(process.argv);
  }
} catch (error) {
  if (error instanceof CommanderError) {
    // commander already printed the usage problem (or the help text).
    process.exitCode = error.exitCode === 0 ? EXIT_OK : EXIT_BAD_INPUT;
  } else {
    const named = inFlagTerms(error);
    say(isAppError(named) ? `error: ${named.message}` : `error: unexpected failure: ${(named as Error).stack ?? String(named)}`);
    process.exitCode = exitCodeOf(named);
  }
}
