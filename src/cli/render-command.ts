/**
 * `generate-gitops-env render`: writes clusters/NAME/ into a work tree from
 * the reference environment, and says what it wrote.
 */
import { Option, type Command } from 'commander';
import type { previewWorkTree as PreviewWorkTree, renderWorkTree as RenderWorkTree, RenderWorkTreeOptions } from '../git/render-work-tree.js';
import { ValidationError } from '../errors.js';
import type { RenderedLayer, RenderPass } from '../gitops/render-cluster.js';
import { packageVersion } from '../package-paths.js';
import { readInputFile } from '../read-input-file.js';
import { colorAllowed, paint } from '../no-color.js';
import { unifiedDiff } from '../gitops/unified-diff.js';
import { assertNotificationAddress, assertNotificationProvider, NOTIFICATION_FILE, NOTIFICATION_PROVIDERS } from '../gitops/notification-schema.js';
import { existingDirectory, readCertificate, say } from './cli-io.js';
import { REFERENCE_ENVIRONMENT } from '../model/defaults.js';

// Loaded when the command runs: `--help` and `--version` load none of the render.
const previewWorkTree: typeof PreviewWorkTree = async (...args) => (await import('../git/render-work-tree.js')).previewWorkTree(...args);
const renderWorkTree: typeof RenderWorkTree = async (...args) => (await import('../git/render-work-tree.js')).renderWorkTree(...args);

/** `render --dry-run`: the diff on stdout (coloured on a terminal unless NO_COLOR), a count on stderr, nothing written. */
async function printDryRun(dir: string, options: RenderWorkTreeOptions): Promise<void> {
  const { result, files } = await previewWorkTree(dir, options);
  const color = colorAllowed(process.stdout);
  for (const file of files) {
    const diff = unifiedDiff(file.path, file.change === 'added' ? undefined : (file.previousContent ?? file.content), file.content);
    for (const line of diff.split('\n').slice(0, -1)) {
      const code =
        line.startsWith('+++') || line.startsWith('---') ? 1 : line.startsWith('+') ? 32 : line.startsWith('-') ? 31 : line.startsWith('@@') ? 36 : 0;
      process.stdout.write(`${code === 0 ? line : paint(color, code, line)}\n`);
    }
  }
  const count = (change: string) => files.filter((f) => f.change === change).length;
  say(
    `  dry run, nothing written: ${count('added')} added, ${count('modified')} modified, ${count('removed')} removed, ${count('unchanged')} unchanged under ${result.gitopsPath}/`,
  );
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
  notificationProvider?: string;
  notificationAddressFile?: string;
  rotateCredentials: boolean;
  role?: string;
  infraProvider?: string;
  dnsProvider?: string;
  enableLayers?: string;
  fluxInstance?: boolean;
  syncUrl?: string;
  syncRef?: string;
  syncSecret?: string;
  dryRun: boolean;
}

/** `name`, its shared path when it is not the cluster's own overlay, and what it runs after. */
function describeLayer(layer: RenderedLayer, gitopsPath: string): string {
  const notes = [
    ...(layer.path !== layer.name && !layer.path.startsWith(`${gitopsPath}/`) ? [layer.path] : []),
    ...(layer.dependsOn.length ? [`after ${layer.dependsOn.join(', ')}`] : []),
  ];
  return notes.length > 0 ? `${layer.name} (${notes.join('; ')})` : layer.name;
}

/** Adds `render` to `program`. */
export function registerRenderCommand(program: Command): void {
  program
    .command('render')
    .description('Write clusters/NAME/ into the work tree DIR from the reference environment.')
    .requiredOption('--repo <dir>', 'work tree of the platform repository')
    .requiredOption('--cluster <name>', 'cluster name (a DNS-1123 label)')
    .requiredOption('--domain <domain>', "the cluster's DNS domain")
    .requiredOption('--region <region>', "the cluster's region, e.g. eu-west-1")
    .option('--reference <name>', 'reference environment to use as the template', REFERENCE_ENVIRONMENT)
    .addOption(
      new Option('--pass <pass>', 'infrastructure: only the layers without dependsOn, nothing sealed; all: everything')
        .choices(['infrastructure', 'all'])
        .default('all'),
    )
    .option('--cert <pem-file>', "the cluster's Sealed Secrets certificate (needed by --pass all)")
    .option(
      '--registry-auth <dockerconfigjson-file>',
      'the registry pull secret (a .dockerconfigjson), sealed exactly as given; without it none is written and images are pulled anonymously',
    )
    .option(
      '--notification-provider <type>',
      `where Flux's failures are sent: ${NOTIFICATION_PROVIDERS.join(', ')} (a Provider and an Alert on every Kustomization and HelmRelease for error events); kept on re-renders`,
    )
    .option(
      '--notification-address-file <file>',
      "a file holding the Provider's webhook URL (https://), sealed like every credential, never written in plain text",
    )
    .option('--rotate-credentials', 'seal fresh credentials even where sealed ones exist', false)
    .option('--role <role>', "the cluster's role, when the platform's layer catalog selects by it (e.g. tooling, env)")
    .option('--infra-provider <provider>', 'where the cluster runs, when the catalog selects by it (e.g. proxmox, aws, gcp)')
    .option('--dns-provider <provider>', "who serves the cluster's DNS zone, when the catalog selects by it (e.g. route53, cloudflare)")
    .option('--enable-layers <names>', 'the optional layers this cluster resumes, comma-separated (e.g. previews); "" for none; left out: the ones it had')
    .option('--flux-instance', 'also write flux/flux-instance.yaml: Flux managed by the Flux Operator, syncing clusters/NAME')
    .option('--sync-url <url>', 'the repository the FluxInstance syncs from (https://, ssh:// or oci://); needed with --flux-instance')
    .option('--sync-ref <ref>', 'the ref it syncs: refs/heads/BRANCH for Git (default refs/heads/main), a tag for OCI (default latest)')
    .option('--sync-secret <name>', 'the Secret in flux-system with the credentials the FluxInstance pulls a private repository with (sync.pullSecret)')
    .option('--dry-run', 'print what would change as a unified diff and write nothing', false)
    .action(async (opts: RenderFlags) => {
      const [{ CLUSTER_ATTRIBUTES, parseClusterSpec, parseReferenceName }, { fluxSyncNote }] = await Promise.all([
        import('../model/cluster-spec.js'),
        import('../gitops/flux-instance.js'),
      ]);
      // Every flag is checked before the progress line: a typo in --cluster must not read as a render that started.
      const cluster = parseClusterSpec({
        name: opts.cluster,
        domain: opts.domain,
        region: opts.region,
        ...(opts.role !== undefined ? { role: opts.role } : {}),
        ...(opts.infraProvider !== undefined ? { infra_provider: opts.infraProvider } : {}),
        ...(opts.dnsProvider !== undefined ? { dns_provider: opts.dnsProvider } : {}),
        ...(opts.enableLayers !== undefined
          ? {
              enable_layers: opts.enableLayers
                .split(',')
                .map((n) => n.trim())
                .filter((n) => n !== ''),
            }
          : {}),
      });
      const reference = parseReferenceName(opts.reference);
      const dir = await existingDirectory(opts.repo);
      if (opts.pass === 'all' && !opts.cert) {
        throw new ValidationError([
          {
            field: '--cert',
            message: "--pass all seals credentials and needs the cluster's certificate (--cert PEM_FILE); use --pass infrastructure for the first pass",
          },
        ]);
      }
      if ((opts.syncUrl !== undefined || opts.syncRef !== undefined || opts.syncSecret !== undefined) && opts.fluxInstance !== true) {
        throw new ValidationError([
          { field: '--sync-url', message: '--sync-url, --sync-ref and --sync-secret configure the FluxInstance: add --flux-instance' },
        ]);
      }
      if (opts.notificationProvider !== undefined) assertNotificationProvider(opts.notificationProvider, '--notification-provider');
      const notificationAddress =
        opts.notificationAddressFile !== undefined
          ? assertNotificationAddress(await readInputFile(opts.notificationAddressFile, '--notification-address-file'), '--notification-address-file')
          : undefined;
      const certificate = opts.cert ? await readCertificate(opts.cert) : undefined;
      const registryAuth = opts.registryAuth ? await readInputFile(opts.registryAuth, '--registry-auth') : undefined;
      say(`Rendering ${opts.cluster} (${opts.domain}, ${opts.region}) from clusters/${opts.reference}, pass ${opts.pass}…`);
      const options: RenderWorkTreeOptions = {
        cluster,
        reference,
        pass: opts.pass,
        generatorVersion: packageVersion(),
        rotateCredentials: opts.rotateCredentials,
        ...(certificate ? { certificate } : {}),
        ...(registryAuth !== undefined ? { registryAuth } : {}),
        ...(opts.notificationProvider !== undefined ? { notificationProvider: opts.notificationProvider } : {}),
        ...(notificationAddress !== undefined ? { notificationAddress } : {}),
        ...(opts.fluxInstance === true ? { fluxInstance: true } : {}),
        ...(opts.syncUrl !== undefined ? { syncUrl: opts.syncUrl } : {}),
        ...(opts.syncRef !== undefined ? { syncRef: opts.syncRef } : {}),
        ...(opts.syncSecret !== undefined ? { syncSecret: opts.syncSecret } : {}),
      };
      if (opts.dryRun) {
        await printDryRun(dir, options);
        return;
      }
      const { result, changes } = await renderWorkTree(dir, options);
      if (result.pass !== opts.pass) say(`  ${result.gitopsPath} already has its full tree: rendered pass ${result.pass} so no layer is taken away.`);
      const attributes = CLUSTER_ATTRIBUTES.filter((name) => result.attributes[name] !== undefined).map((name) => `${name} ${result.attributes[name]}`);
      if (attributes.length > 0) say(`  attributes: ${attributes.join(', ')}${result.attributes.self_hosted ? ' (self-hosted)' : ''}`);
      say(`  layers: ${result.layers.map((l) => describeLayer(l, result.gitopsPath)).join(', ')}`);
      if (result.skippedLayers.length > 0) say(`  not for this cluster: ${result.skippedLayers.join(', ')}`);
      if (result.fluxInstance)
        say(`  Flux managed by the Flux Operator: ${result.gitopsPath}/flux/flux-instance.yaml (apply it once after installing the operator)`);
      if (result.fluxSync !== undefined) say(`  ${fluxSyncNote(result.fluxSync)}`);
      say(
        `  ${result.tree.size} files under ${result.gitopsPath}/: ${changes.written.length} written, ${changes.unchanged.length} unchanged, ${changes.removed.length} removed`,
      );
      if (result.foreignRoots.length > 0) {
        say(
          `  kept as they are and listed in ${result.gitopsPath}/kustomization.yaml: ${result.foreignRoots.map((d) => `${d}/`).join(', ')} (not generated, e.g. by flux bootstrap)`,
        );
      }
      for (const c of result.credentials) {
        say(
          c.action === 'omitted'
            ? c.supplied === 'notification-address'
              ? `  credential ${c.namespace}/${c.name}: omitted, no --notification-address-file given: no failure notifications (no Provider, no Alert)`
              : `  credential ${c.namespace}/${c.name}: omitted, no --registry-auth given: no pull secret is written, images are pulled anonymously (public images only)`
            : `  credential ${c.namespace}/${c.name}: ${c.action} (${result.gitopsPath}/${c.file})`,
        );
      }
      if (result.notifications !== undefined) {
        say(
          `  failure notifications: ${result.notifications.provider} Provider and Alert ${result.notifications.name} (${result.gitopsPath}/${NOTIFICATION_FILE}), error events of every Kustomization and HelmRelease`,
        );
      }
      say(
        result.pass === 'infrastructure'
          ? `Next: verify, commit and push; once the cluster's Sealed Secrets controller is up, render --pass all --cert CERT.`
          : `Next: generate-gitops-env verify --repo ${opts.repo} --cluster ${opts.cluster}, then commit and push; Flux is pointed at ${result.gitopsPath}.`,
      );
      process.stdout.write(`${result.gitopsPath}\n`);
    });
}
