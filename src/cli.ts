#!/usr/bin/env node
/**
 * Composition root of `generate-gitops-env`, the offline generator CLI: init a
 * platform repository, render a cluster's tree, verify a tree, draw its Flux
 * graph, seal a secret. Results go to stdout, progress and errors to stderr.
 */
import { readdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { renderWorkTree } from './app/render-work-tree.js';
import { verifyWorkTree } from './app/verify-work-tree.js';
import { drawClusterGraph } from './app/draw-cluster-graph.js';
import { isAppError, ValidationError } from './errors.js';
import { EXIT_BAD_INPUT, EXIT_FAILURE, EXIT_OK, exitCodeOf } from './exit-codes.js';
import { initPlatformRepository } from './git/seed-repository.js';
import { publishPlatform } from './oci/publish-platform.js';
import type { RenderedLayer, RenderPass } from './gitops/render-cluster.js';
import { CLUSTER_ATTRIBUTES } from './model/cluster-spec.js';
import { GRAPH_FORMATS, type GraphFormat } from './graph/graph-format.js';
import { packageVersion, platformDir } from './package-paths.js';
import { SEALING_SCOPES, type SealingScope } from './sealing/seal.js';
import { sealSecretManifest } from './sealing/seal-secret-manifest.js';
import { parseSealingCertificate, type SealingCertificate } from './sealing/sealing-certificate.js';
import { readInputFile } from './read-input-file.js';
import { registerRotateCommand } from './cli/rotate-command.js';

const say = (line = '') => process.stderr.write(`${line}\n`);

async function readCertificate(path: string): Promise<SealingCertificate> {
  return parseSealingCertificate(await readInputFile(path, '--cert'), '--cert');
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new ValidationError([{ field: 'stdin', message: 'expected a Secret manifest on standard input' }]);
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function choice<T extends string>(values: readonly T[], flag: string) {
  return (value: string): T => {
    if (!(values as readonly string[]).includes(value)) throw new InvalidArgumentError(`${flag} must be one of ${values.join(', ')}`);
    return value as T;
  };
}

/** The flags of `render`. */
interface RenderFlags {
  repo: string;
  cluster: string;
  domain: string;
  region: string;
  reference: string;
  pass: RenderPass;
  cert?: string;
  registryAuth?: string;
  rotateCredentials: boolean;
  role?: string;
  infraProvider?: string;
  dnsProvider?: string;
  fluxInstance?: boolean;
  syncUrl?: string;
  syncRef?: string;
}

/** `name`, its shared path when it is not the cluster's own overlay, and what it runs after. */
function describeLayer(layer: RenderedLayer, gitopsPath: string): string {
  const notes = [
    ...(layer.path !== layer.name && !layer.path.startsWith(`${gitopsPath}/`) ? [layer.path] : []),
    ...(layer.dependsOn.length ? [`after ${layer.dependsOn.join(', ')}`] : []),
  ];
  return notes.length > 0 ? `${layer.name} (${notes.join('; ')})` : layer.name;
}

/** The platforms shipped under platform/, each a directory `init --platform` can seed. */
function shippedPlatforms(): string[] {
  const root = dirname(platformDir());
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && /^[a-z0-9][-a-z0-9]*$/.test(entry.name))
    .map((entry) => entry.name)
    .sort((a, b) => (a === 'default' ? -1 : b === 'default' ? 1 : a.localeCompare(b)));
}

function program(): Command {
  const cli = new Command('generate-gitops-env')
    .description("Render, verify and draw a cluster's Flux GitOps tree; seal secrets for its Sealed Secrets controller.")
    .version(packageVersion())
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeErr: (text) => process.stderr.write(text) });

  cli
    .command('init')
    .description('Make DIR a new Git repository holding the reference platform, committed.')
    .argument('<dir>', 'directory to create (must be missing or empty)')
    .option('--platform <name>', `which shipped platform to seed: ${shippedPlatforms().join(', ')}`, 'default')
    .action(async (dir: string, opts: { platform: string }) => {
      const target = resolve(dir);
      const known = shippedPlatforms();
      if (!known.includes(opts.platform)) {
        throw new ValidationError([{ field: '--platform', message: `${JSON.stringify(opts.platform)} is not a shipped platform: one of ${known.join(', ')}` }]);
      }
      const sha = await initPlatformRepository(target, platformDir(opts.platform));
      say(`Initialized ${target} with the ${opts.platform} reference platform (commit ${sha.slice(0, 12)}).`);
      say(`Next: generate-gitops-env render --repo ${dir} --cluster NAME --domain DOMAIN --region REGION${opts.platform === 'default' ? '' : ' [--role ROLE --infra-provider PROVIDER --dns-provider PROVIDER]'}`);
      process.stdout.write(`${sha}\n`);
    });

  cli
    .command('render')
    .description("Write clusters/NAME/ into the work tree DIR from the reference environment.")
    .requiredOption('--repo <dir>', 'work tree of the platform repository')
    .requiredOption('--cluster <name>', 'cluster name (a DNS-1123 label)')
    .requiredOption('--domain <domain>', "the cluster's DNS domain")
    .requiredOption('--region <region>', "the cluster's region, e.g. eu-west-1")
    .option('--reference <name>', 'reference environment to use as the template', 'development')
    .addOption(new Option('--pass <pass>', 'infrastructure: only the layers without dependsOn, nothing sealed; all: everything').choices(['infrastructure', 'all']).default('all'))
    .option('--cert <pem-file>', "the cluster's Sealed Secrets certificate (needed by --pass all)")
    .option('--registry-auth <dockerconfigjson-file>', 'use this registry pull secret instead of generating one')
    .option('--rotate-credentials', 'seal fresh credentials even where sealed ones exist', false)
    .option('--role <role>', "the cluster's role, when the platform's layer catalog selects by it (e.g. tooling, env)")
    .option('--infra-provider <provider>', 'where the cluster runs, when the catalog selects by it (e.g. proxmox, aws, gcp)')
    .option('--dns-provider <provider>', "who serves the cluster's DNS zone, when the catalog selects by it (e.g. route53, cloudflare)")
    .option('--flux-instance', 'also write flux/flux-instance.yaml: Flux managed by the Flux Operator, syncing clusters/NAME')
    .option('--sync-url <url>', 'the repository the FluxInstance syncs from (https://, ssh:// or oci://); needed with --flux-instance')
    .option('--sync-ref <ref>', 'the ref it syncs: refs/heads/BRANCH for Git (default refs/heads/main), a tag for OCI (default latest)')
    .action(async (opts: RenderFlags) => {
      const dir = resolve(opts.repo);
      if (opts.pass === 'all' && !opts.cert) {
        throw new ValidationError([{ field: '--cert', message: '--pass all seals credentials and needs the cluster\'s certificate (--cert PEM_FILE); use --pass infrastructure for the first pass' }]);
      }
      if ((opts.syncUrl !== undefined || opts.syncRef !== undefined) && opts.fluxInstance !== true) {
        throw new ValidationError([{ field: '--sync-url', message: '--sync-url and --sync-ref configure the FluxInstance: add --flux-instance' }]);
      }
      const certificate = opts.cert ? await readCertificate(opts.cert) : undefined;
      const registryAuth = opts.registryAuth ? await readInputFile(opts.registryAuth, '--registry-auth') : undefined;
      say(`Rendering ${opts.cluster} (${opts.domain}, ${opts.region}) from clusters/${opts.reference}, pass ${opts.pass}…`);
      const { result, changes } = await renderWorkTree(dir, {
        cluster: {
          name: opts.cluster,
          domain: opts.domain,
          region: opts.region,
          ...(opts.role !== undefined ? { role: opts.role } : {}),
          ...(opts.infraProvider !== undefined ? { infra_provider: opts.infraProvider } : {}),
          ...(opts.dnsProvider !== undefined ? { dns_provider: opts.dnsProvider } : {}),
        },
        reference: opts.reference,
        pass: opts.pass,
        generatorVersion: packageVersion(),
        rotateCredentials: opts.rotateCredentials,
        ...(certificate ? { certificate } : {}),
        ...(registryAuth !== undefined ? { registryAuth } : {}),
        ...(opts.fluxInstance === true ? { fluxInstance: true } : {}),
        ...(opts.syncUrl !== undefined ? { syncUrl: opts.syncUrl } : {}),
        ...(opts.syncRef !== undefined ? { syncRef: opts.syncRef } : {}),
      });
      if (result.pass !== opts.pass) say(`  ${result.gitopsPath} already has its full tree: rendered pass ${result.pass} so no layer is taken away.`);
      const attributes = CLUSTER_ATTRIBUTES.filter((name) => result.attributes[name] !== undefined).map((name) => `${name} ${result.attributes[name]}`);
      if (attributes.length > 0) say(`  attributes: ${attributes.join(', ')}${result.attributes.self_hosted ? ' (self-hosted)' : ''}`);
      say(`  layers: ${result.layers.map((l) => describeLayer(l, result.gitopsPath)).join(', ')}`);
      if (result.skippedLayers.length > 0) say(`  not for this cluster: ${result.skippedLayers.join(', ')}`);
      if (result.fluxInstance) say(`  Flux managed by the Flux Operator: ${result.gitopsPath}/flux/flux-instance.yaml (apply it once after installing the operator)`);
      say(`  ${result.tree.size} files under ${result.gitopsPath}/: ${changes.written.length} written, ${changes.unchanged.length} unchanged, ${changes.removed.length} removed`);
      if (result.foreignRoots.length > 0) {
        say(`  kept as they are and listed in ${result.gitopsPath}/kustomization.yaml: ${result.foreignRoots.map((d) => `${d}/`).join(', ')} (not generated, e.g. by flux bootstrap)`);
      }
      for (const c of result.credentials) say(`  credential ${c.namespace}/${c.name}: ${c.action} (${result.gitopsPath}/${c.file})`);
      say(
        result.pass === 'infrastructure'
          ? `Next: verify, commit and push; once the cluster's Sealed Secrets controller is up, render --pass all --cert CERT.`
          : `Next: generate-gitops-env verify --repo ${opts.repo} --cluster ${opts.cluster}, then commit and push; Flux is pointed at ${result.gitopsPath}.`,
      );
      process.stdout.write(`${result.gitopsPath}\n`);
    });

  cli
    .command('verify')
    .description('Check a tree before it is pushed: exit 0 when consistent, 1 with one finding a line.')
    .requiredOption('--repo <dir>', 'work tree of the platform repository')
    .option('--cluster <name>', 'only this cluster (default: every cluster under clusters/)')
    .action(async (opts: { repo: string; cluster?: string }) => {
      const report = await verifyWorkTree(resolve(opts.repo), opts.cluster !== undefined ? { cluster: opts.cluster } : {});
      for (const finding of report.findings) process.stdout.write(`${finding}\n`);
      for (const note of report.notes) say(`note: ${note}`);
      say(`==> ${report.summary}`);
      process.exitCode = report.findings.length > 0 ? EXIT_FAILURE : EXIT_OK;
    });

  cli
    .command('graph')
    .description("Draw a cluster's Flux dependency graph (from dependsOn).")
    .requiredOption('--repo <dir>', 'work tree of the platform repository')
    .requiredOption('--cluster <name>', 'cluster name')
    .addOption(new Option('--format <format>', 'output format').argParser(choice<GraphFormat>(GRAPH_FORMATS, '--format')).default('mermaid'))
    .action(async (opts: { repo: string; cluster: string; format: GraphFormat }) => {
      process.stdout.write(await drawClusterGraph(resolve(opts.repo), opts.cluster, opts.format));
    });

  cli
    .command('publish')
    .description("Push the repository's HEAD as a Flux OCI artifact, tagged with the commit SHA and latest.")
    .requiredOption('--repo <dir>', 'work tree of the platform repository')
    .requiredOption('--to <oci-reference>', 'where to push, e.g. oci://registry.example.net/platform/gitops')
    .option('--tag <tag...>', 'tags to push instead of the commit SHA and latest')
    .option('--source <url>', 'the org.opencontainers.image.source annotation (default: the origin remote, credentials removed)')
    .option('--insecure', 'allow plain http to a registry that is not on loopback', false)
    .action(async (opts: { repo: string; to: string; tag?: string[]; source?: string; insecure: boolean }) => {
      // Registry credentials only from the environment, never from flags (the process list shows flags).
      const username = process.env.OCI_USERNAME;
      const password = process.env.OCI_PASSWORD;
      if ((username === undefined) !== (password === undefined)) {
        throw new ValidationError([{ field: 'OCI_USERNAME/OCI_PASSWORD', message: 'set both or neither' }]);
      }
      say(`Publishing ${opts.repo} to ${opts.to}…`);
      const published = await publishPlatform({
        repoDir: resolve(opts.repo),
        reference: opts.to,
        // Unset unless asked for: the client then speaks plain http to loopback registries only.
        ...(opts.insecure ? { insecure: true } : {}),
        ...(opts.tag ? { tags: opts.tag } : {}),
        ...(opts.source ? { source: opts.source } : {}),
        ...(username !== undefined && password !== undefined ? { credentials: { username, password } } : {}),
      });
      say(`  ${published.files} files, ${published.size} bytes compressed, revision ${published.revision}`);
      say(`  pushed ${published.repository} as ${published.tags.join(', ')} (${published.digest})`);
      say(`Next: point an OCIRepository (source.toolkit.fluxcd.io/v1) at ${opts.to.replace(/:[^/:]*$/, '')} with ref.digest ${published.digest}.`);
      process.stdout.write(`${published.digest}\n`);
    });

  cli
    .command('seal')
    .description('Seal a Secret manifest read on stdin into a SealedSecret on stdout (like kubeseal --cert).')
    .requiredOption('--cert <pem-file>', "the cluster's Sealed Secrets certificate")
    .option('--namespace <ns>', "the Secret's namespace (overrides the manifest's)")
    .option('--name <name>', "the Secret's name (overrides the manifest's)")
    .addOption(new Option('--scope <scope>', 'sealing scope').argParser(choice<SealingScope>(SEALING_SCOPES, '--scope')).default('strict'))
    .action(async (opts: { cert: string; namespace?: string; name?: string; scope: SealingScope }) => {
      const certificate = await readCertificate(opts.cert);
      const manifest = await readStdin();
      process.stdout.write(
        sealSecretManifest(manifest, {
          certificate,
          scope: opts.scope,
          ...(opts.namespace !== undefined ? { namespace: opts.namespace } : {}),
          ...(opts.name !== undefined ? { name: opts.name } : {}),
        }),
      );
    });

  registerRotateCommand(cli);
  return cli;
}

try {
  await program().parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // commander already printed the usage problem (or the help text).
    process.exitCode = error.exitCode === 0 ? EXIT_OK : EXIT_BAD_INPUT;
  } else {
    say(isAppError(error) ? `error: ${error.message}` : `error: unexpected failure: ${(error as Error).stack ?? String(error)}`);
    process.exitCode = exitCodeOf(error);
  }
}
