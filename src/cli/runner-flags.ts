/**
 * The flags of `scaffold-runner`, each also read from its environment
 * variable (`SCAFFOLD_REPO_URL`, …; see `run-contract/runner-inputs.ts`), and
 * the rules that read switches from the environment. Credentials never come
 * from flags: arguments are visible in the process list.
 */
import { Command, Option } from 'commander';
import { ValidationError } from '../errors.js';
import { packageVersion } from '../package-paths.js';
import { RUN_ACTIONS, runActionsDescribed, type RunAction } from '../model/run-action.js';
import { DELIVERY_ENV } from '../delivery/delivery-settings.js';
import { RUNNER_ENV } from '../run-contract/runner-inputs.js';
import { requiredFlagsHelp } from './required-flags-help.js';
import { REFERENCE_ENVIRONMENT, DEFAULT_BRANCH, SEALED_SECRETS_CONTROLLER, CONTROLLER_WAIT_MINUTES } from '../model/defaults.js';
import { forgeNameList } from '../model/forges.js';

/** The parsed flags. */
export interface RunnerFlags {
  id?: string;
  action: RunAction;
  repoUrl: string;
  branch: string;
  cluster: string;
  /** An upgrade: further clusters to upgrade in the same run, comma-separated. */
  batch?: string;
  /** Required for a scaffold; an upgrade or a removal uses the cluster's recorded identity. */
  domain?: string;
  role?: string;
  infraProvider?: string;
  dnsProvider?: string;
  region?: string;
  reference: string;
  kubeconfig?: string;
  cert?: string;
  sealedSecretsNamespace: string;
  sealedSecretsName: string;
  resultFile?: string;
  workDir?: string;
  scratchDir?: string;
  leaseFile?: string;
  controllerTimeout: string;
  registryAuth?: string;
  notificationProvider?: string;
  notificationAddressFile?: string;
  rotateCredentials: boolean;
  rotateOnly?: string;
  rotateValues: string;
  freshValues: boolean;
  deleteData: boolean;
  liftTimeout: string;
  waitReady: boolean;
  readyTimeout: string;
  delivery: string;
  forge?: string;
  forgeApiUrl?: string;
  autoMerge: boolean;
  mergePollInterval: string;
  logLevel: string;
}

function option(flags: string, description: string, env: string, fallback?: string): Option {
  const o = new Option(flags, description).env(env);
  return fallback === undefined ? o : o.default(fallback);
}

/** A boolean switch from the environment: unset or empty is false. */
export function booleanFromEnv(env: NodeJS.ProcessEnv, name: string): boolean {
  const value = (env[name] ?? '').trim().toLowerCase();
  if (value === '' || value === 'false' || value === '0' || value === 'no') return false;
  if (value === 'true' || value === '1' || value === 'yes') return true;
  throw new ValidationError([{ field: name, message: 'must be true or false' }]);
}

/** `--rotate-only a,ns/b`: credential names as scaffold.yaml declares them (a DNS label, optionally after a namespace). */
export function rotationNames(value: string | undefined): readonly string[] | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const names = value.split(',').map((n) => n.trim());
  const bad = names.filter((n) => !/^([a-z0-9]([-a-z0-9]*[a-z0-9])?\/)?[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(n));
  if (bad.length > 0) throw new ValidationError([{ field: '--rotate-only', message: `not credential names: ${bad.map((n) => JSON.stringify(n)).join(', ')}` }]);
  return names;
}

/** The `scaffold-runner` command with every flag, running `action` with the parsed flags. */
export function runnerCommand(action: (flags: RunnerFlags) => Promise<void>): Command {
  return (
    new Command('scaffold-runner')
      .description(
        "Scaffold one cluster's GitOps tree in two passes: infrastructure first, then everything sealed with the cluster's own key. " +
          'With --action upgrade or remove: render a generated cluster again from the reference (credentials kept), or remove the files the generator wrote, in one commit.',
      )
      .version(packageVersion())
      .exitOverride()
      .showHelpAfterError("(run 'scaffold-runner --help' for usage)")
      .configureHelp(requiredFlagsHelp)
      .addOption(option('--id <id>', 'run id, recorded in commit trailers (default: a new UUID)', RUNNER_ENV.id))
      .addOption(option('--action <action>', runActionsDescribed(), RUNNER_ENV.action, 'scaffold').choices(RUN_ACTIONS))
      .addOption(option('--repo-url <url>', 'the GitOps repository (https, ssh or file)', RUNNER_ENV.repoUrl).makeOptionMandatory())
      .addOption(option('--branch <branch>', 'branch to push to', RUNNER_ENV.branch, DEFAULT_BRANCH))
      .addOption(option('--cluster <name>', 'the new cluster (DNS-1123 label)', RUNNER_ENV.cluster).makeOptionMandatory())
      .addOption(
        option(
          '--batch <names>',
          'an upgrade only: further clusters to upgrade after --cluster, comma-separated, from the same clone, each verified and committed on its own, all landed in one push',
          RUNNER_ENV.batch,
        ),
      )
      .addOption(
        option('--domain <domain>', "the cluster's DNS domain (required for a scaffold; an upgrade or a removal uses the recorded one)", RUNNER_ENV.domain),
      )
      .addOption(
        option('--region <region>', "the cluster's region (required for a scaffold; an upgrade or a removal uses the recorded one)", RUNNER_ENV.region),
      )
      .addOption(option('--role <role>', "the cluster's role, when the platform's catalog selects layers by it", RUNNER_ENV.role))
      .addOption(option('--infra-provider <provider>', "the cluster's infrastructure provider (catalog platforms)", RUNNER_ENV.infraProvider))
      .addOption(option('--dns-provider <provider>', "the cluster's DNS provider (catalog platforms)", RUNNER_ENV.dnsProvider))
      .addOption(option('--reference <name>', 'reference environment', RUNNER_ENV.reference, REFERENCE_ENVIRONMENT))
      .addOption(
        option('--kubeconfig <file>', "the new cluster's kubeconfig (steps 4-5 fetch its certificate; --wait-ready reads its Flux)", RUNNER_ENV.kubeconfigFile),
      )
      .addOption(option('--cert <pem-file>', "the cluster's sealing certificate (skips steps 4-5)", RUNNER_ENV.certificateFile))
      .addOption(
        option(
          '--sealed-secrets-namespace <ns>',
          'namespace of the Sealed Secrets controller',
          RUNNER_ENV.sealedSecretsNamespace,
          SEALED_SECRETS_CONTROLLER.namespace,
        ),
      )
      .addOption(
        option('--sealed-secrets-name <name>', 'name of the controller Deployment and Service', RUNNER_ENV.sealedSecretsName, SEALED_SECRETS_CONTROLLER.name),
      )
      .addOption(
        option(
          '--controller-timeout <duration>',
          'how long to wait for the controller (e.g. 900s, 15m)',
          RUNNER_ENV.controllerTimeout,
          `${CONTROLLER_WAIT_MINUTES}m`,
        ),
      )
      .addOption(option('--registry-auth <file>', 'a .dockerconfigjson to use as the registry pull secret', RUNNER_ENV.registryAuthFile))
      .addOption(
        option(
          '--notification-provider <type>',
          "where Flux's failures are sent: slack, msteams or generic (scaffold only; needs --notification-address-file)",
          RUNNER_ENV.notificationProvider,
        ),
      )
      .addOption(
        option(
          '--notification-address-file <file>',
          "a file holding the Provider's webhook URL (https://), sealed like every credential",
          RUNNER_ENV.notificationAddressFile,
        ),
      )
      // Not .env(): commander turns a boolean flag on whenever its variable is set, so
      // SCAFFOLD_ROTATE_CREDENTIALS=false would rotate every credential. Read below.
      .addOption(
        new Option(
          '--rotate-credentials',
          'seal fresh credentials even where sealed ones exist (env SCAFFOLD_ROTATE_CREDENTIALS=true|false; scaffold only)',
        ).default(false),
      )
      .addOption(
        new Option('--rotate-only <names>', 'rotate these credentials only: comma-separated name or namespace/name (env SCAFFOLD_ROTATE_ONLY; scaffold only)'),
      )
      .addOption(
        option(
          '--rotate-values <same|fresh>',
          "what rotated credentials hold: fresh values, or the same values re-encrypted by the cluster's controller (/v1/rotate; needs --kubeconfig)",
          RUNNER_ENV.rotateValues,
          'fresh',
        ).choices(['same', 'fresh']),
      )
      .addOption(
        new Option(
          '--fresh-values',
          'with a rotation: also write the Jobs that set the fresh values where the databases keep them, as generate-gitops-env rotate --fresh-values does (env SCAFFOLD_FRESH_VALUES=true|false; scaffold only)',
        ).default(false),
      )
      .addOption(
        new Option(
          '--delete-data',
          "a removal: delete the data too: push the lifting of the prune protection, wait until the cluster's Flux applied it, then push the removal (needs --kubeconfig; env SCAFFOLD_DELETE_DATA=true|false)",
        ).default(false),
      )
      .addOption(option('--lift-timeout <duration>', 'how long --delete-data waits for Flux to apply the lift (e.g. 600s, 15m)', RUNNER_ENV.liftTimeout, '15m'))
      // Not .env() either, for the same reason: SCAFFOLD_WAIT_READY is read below.
      .addOption(
        new Option(
          '--wait-ready',
          "after the last push, wait until the cluster's Flux Kustomizations are Ready at the pushed commit (needs --kubeconfig; env SCAFFOLD_WAIT_READY=true|false)",
        ).default(false),
      )
      .addOption(option('--ready-timeout <duration>', 'how long --wait-ready waits (e.g. 600s, 15m)', RUNNER_ENV.readyTimeout, '15m'))
      .addOption(option('--delivery <mode>', 'push (straight to --branch) or pull_request (each pass through a pull/merge request)', DELIVERY_ENV.mode, 'push'))
      .addOption(option('--forge <name>', `${forgeNameList()}: who hosts the repository (pull_request)`, DELIVERY_ENV.forge))
      .addOption(option('--forge-api-url <url>', "the forge's API (default: derived from --repo-url)", DELIVERY_ENV.apiUrl))
      // Not .env(), for the reason given at --rotate-credentials.
      .addOption(new Option('--auto-merge', `merge each request once the forge says it is mergeable (env ${DELIVERY_ENV.autoMerge}=true|false)`).default(false))
      .addOption(option('--merge-poll-interval <duration>', 'how often to look at an open request', 'SCAFFOLD_MERGE_POLL_INTERVAL', '15s'))
      .addOption(option('--result-file <file>', 'where to write the result JSON (default: the termination-message path)', RUNNER_ENV.resultFile))
      .addOption(
        option('--work-dir <dir>', 'where the working copy goes (default: the OS temp dir); the executor removes it after the run', RUNNER_ENV.workDir),
      )
      .addOption(
        option(
          '--scratch-dir <dir>',
          "where the working copy's files go, apart from its history (which stays in --work-dir), and where verify copies the tree kustomize builds (default: the OS temp dir, the files in --work-dir); a memory-backed directory spares the disk's file creations",
          RUNNER_ENV.scratchDir,
        ),
      )
      .addOption(
        option('--lease-file <file>', "a file renewed every few seconds while the run works, removed at its end (the run's owner lease)", RUNNER_ENV.leaseFile),
      )
      .addOption(option('--log-level <level>', 'debug, info, warn or error', RUNNER_ENV.logLevel, 'info'))
      .action(action)
  );
}
