/**
 * One scaffold run: the steps of the table in `model/run-step-tables.ts`, two passes.
 *
 * Credentials must be sealed with the new cluster's own Sealed Secrets key, but
 * that controller is part of the infrastructure being generated. So the run
 * pushes the infrastructure layer first, waits for Flux to bring the controller
 * up, fetches its certificate, and only then seals and pushes the rest.
 *
 * Every step is safe to repeat: a rerun after a crash at any point clones what
 * the remote has, re-renders to the same bytes (credentials kept), and commits
 * nothing that is already there.
 */
import { ValidationError } from '../errors.js';
import type { Logger } from '../logger.js';
import { parseClusterSpec, type ClusterSpec } from '../model/cluster-spec.js';
import { SCAFFOLD_STEPS, STEPS, type StepName, type StepNumber } from '../model/run-step-tables.js';
import { assertDockerConfigJson } from '../gitops/credential-values.js';
import { fluxSyncNote } from '../gitops/flux-instance.js';
import type { RenderPass } from '../gitops/render-cluster.js';
import type { CredentialRotation } from '../gitops/sealed-credentials.js';
import type { FreshValuesFollowUp } from '../gitops/rotate-credentials.js';
import { refuseFreshSuppliedIn, writeFreshValuesFollowUp } from '../workspace/fresh-values-work-tree.js';
import { parseSealingCertificate } from '../sealing/sealing-certificate.js';
import type { RunResult } from '../run/run-record.js';
import type { PassSummary } from '../run/delivery.js';
import { reencryptThroughController } from './reencrypt-through-controller.js';
import type { SealingCertificateSource, SealingControllerRef } from '../run/ports.js';
import { runInFrame, type RunFrameDeps, type RunFrameOptions, type WorkTreeVerifier } from './run-frame.js';
import { assertRunId } from './run-git.js';
import type { StepWork } from './step-runner.js';
import { CONTROLLER_WAIT_MINUTES, SEALED_SECRETS_CONTROLLER } from '../model/defaults.js';

// The step catalogue lives in the model so the service can read it without the runner;
// re-exported here for the runner's callers, with the step runner's error and result.
export { STEPS, type StepNumber };
export { failedResult, StepError } from './step-runner.js';

export type { WorkTreeVerifier } from './run-frame.js';

/** Collaborators of a run. */
export interface ScaffoldRunDeps extends RunFrameDeps {
  /** Needed unless the run is given a certificate. */
  readonly certificates?: SealingCertificateSource;
}

/** What to scaffold, and where. */
export interface ScaffoldRunOptions extends RunFrameOptions {
  readonly cluster: ClusterSpec;
  /** The cluster's certificate, when the caller has it: steps 4 and 5 are skipped. */
  readonly certificatePem?: string;
  /** @default kube-system/sealed-secrets-controller */
  readonly controller?: SealingControllerRef;
  /** How long step 4 may wait. @default 15 minutes */
  readonly controllerTimeoutMs?: number;
  readonly registryAuth?: string;
  /** Failure notifications: the Provider type and its webhook address (sealed, never logged); checked by the render. */
  readonly notifications?: { readonly provider: string; readonly address: string };
  /** Rotate credentials: all (`true`: with `same` values, the ones not sealed with the controller's newest key) or the ones named. @default false */
  readonly rotateCredentials?: CredentialRotation;
  /**
   * What a rotation puts in the rotated SealedSecrets: `fresh` values sealed by
   * the runner (`--rotate-credentials`' meaning), or the `same` values
   * re-encrypted by the cluster's own controller (`/v1/rotate`), which needs the
   * certificate source and no supplied certificate. @default 'fresh'
   */
  readonly rotateValues?: 'same' | 'fresh';
  /**
   * With `rotateCredentials`: the values are fresh, so also write the Jobs that
   * set them where the databases keep them, exactly as `generate-gitops-env
   * rotate --fresh-values` does (`freshValuesFollowUp`); the result names the
   * workloads to restart. A supplied credential named is refused before anything is pushed.
   * @default false
   */
  readonly freshValues?: boolean;
  readonly generatorVersion: string;
}

/**
 * Runs the steps of the table, in order, skipping those whose rule says so.
 * @returns the succeeded result
 * @throws StepError carrying the failed step, the original error and the commits
 *   pushed before it, so callers can write a failed result and choose an exit code
 */
export async function runScaffold(deps: ScaffoldRunDeps, options: ScaffoldRunOptions): Promise<RunResult> {
  assertRunId(options.id);
  // Bad input is refused before anything is pushed: found at step 6, it would
  // leave the cluster with only its first pass on the remote.
  const now = deps.now ?? Date.now;
  parseClusterSpec(options.cluster);
  // An expired or not-yet-valid certificate is refused here too (parseSealingCertificate).
  if (options.certificatePem !== undefined) parseSealingCertificate(options.certificatePem, 'certificate', new Date(now()));
  if (options.registryAuth !== undefined) assertDockerConfigJson(options.registryAuth, 'registryAuth');
  if (options.certificatePem === undefined && !deps.certificates) {
    throw new ValidationError('no sealing certificate given and no Kubernetes access configured to fetch one');
  }
  const rotating = options.rotateCredentials !== undefined && options.rotateCredentials !== false;
  const sameValues = rotating && (options.rotateValues ?? 'fresh') === 'same';
  // Keeping values is the controller's work: it needs the cluster, and the certificate the
  // rotated files are annotated with must be the one that controller serves, not one supplied.
  if (sameValues && (!deps.certificates || options.certificatePem !== undefined)) {
    throw new ValidationError([
      {
        field: 'kubeconfig',
        message:
          "rotating with the same values needs the cluster's kubeconfig and no supplied certificate: its Sealed Secrets controller re-encrypts them (/v1/rotate) and serves the certificate they are then sealed for",
      },
    ]);
  }
  const freshValues = options.freshValues === true && rotating;
  if (options.freshValues === true && !freshValues)
    throw new ValidationError([{ field: 'freshValues', message: 'writes the Jobs for the credentials a rotation seals anew: give rotateCredentials' }]);
  if (freshValues && sameValues)
    throw new ValidationError([
      { field: 'freshValues', message: 'sets new values where the databases keep them, but rotateValues same keeps the values: give rotateValues fresh' },
    ]);
  const controller = options.controller ?? SEALED_SECRETS_CONTROLLER;

  return runInFrame('scaffold', deps, options, (frame) => {
    const { log, gitopsPath } = frame;
    /** Whether step 2 found the full tree already there (a rerun after pass 2 landed). */
    let supersededInfrastructure = false;
    /** What the last render changed, for a pull request's description. */
    let summary: PassSummary = { written: [], removed: [], verify: 'not run' };
    /** Fresh values only: the Jobs written and the workloads to restart. */
    let followUp: FreshValuesFollowUp | undefined;

    const render = async (pass: RenderPass, certificatePem?: string) => {
      const workspace = frame.workspace();
      if (pass === 'infrastructure' && freshValues && Array.isArray(options.rotateCredentials)) {
        // Before the first push: a supplied credential has no fresh value to make up (as `rotate --fresh-values` says).
        await refuseFreshSuppliedIn(workspace.dir, options.rotateCredentials);
      }
      const { result, changes } = await workspace.render({
        cluster: options.cluster,
        reference: frame.reference,
        pass,
        generatorVersion: options.generatorVersion,
        // Rotation is the sealing pass's job. The first pass of a rerun renders the
        // full tree again (a cluster never loses layers) and must keep what is
        // sealed: it may not have the certificate yet, and rotating there would
        // push credentials sealed for a key that step 5 has not confirmed.
        // With the same values the controller already re-encrypted them in place: the render keeps them.
        rotateCredentials: pass === 'all' && !sameValues && (options.rotateCredentials ?? false),
        ...(certificatePem ? { certificate: parseSealingCertificate(certificatePem, 'certificate', new Date(now())) } : {}),
        ...(options.registryAuth !== undefined ? { registryAuth: options.registryAuth } : {}),
        ...(options.notifications !== undefined
          ? { notificationProvider: options.notifications.provider, notificationAddress: options.notifications.address }
          : {}),
      });
      for (const c of result.credentials) {
        log.info(
          { event: 'credential', namespace: c.namespace, name: c.name, action: c.action, file: `${gitopsPath}/${c.file}` },
          c.action === 'omitted' && c.supplied === 'notification-address'
            ? `credential ${c.namespace}/${c.name} omitted: no notification address was given (notifications), so the cluster gets no failure notifications`
            : c.action === 'omitted'
              ? `credential ${c.namespace}/${c.name} omitted: no registry credentials were given (registry_pull_secret), so no pull secret is written and images are pulled anonymously (public images only)`
              : `credential ${c.namespace}/${c.name} ${c.action}`,
        );
      }
      // Said in the run's log like an omitted pull secret: a cluster whose Flux cannot pull shows nothing else.
      if (result.fluxSync !== undefined)
        log.info({ event: 'note', flux_sync: result.fluxSync.url, pull_secret: result.fluxSync.pullSecret ?? null }, fluxSyncNote(result.fluxSync));
      log.info(
        { event: 'rendered', pass: result.pass, files: result.tree.size, written: changes.written.length, removed: changes.removed.length },
        `rendered ${result.tree.size} files (${changes.written.length} written, ${changes.removed.length} removed) for pass ${result.pass}`,
      );
      const written = [...changes.written];
      if (pass === 'all' && freshValues) {
        followUp = await writeFreshValuesFollowUp(
          workspace.dir,
          gitopsPath,
          result.credentials.filter((c) => c.action === 'generated'),
          result.tree,
        );
        logFreshValues(followUp, log);
        written.push(...followUp.files.keys());
      }
      await frame.verify();
      summary = { written, removed: changes.removed, verify: frame.verifies ? 'passed: no findings' : 'not run' };
      return result;
    };

    const commitAndPush = async (pass: RenderPass): Promise<void> => {
      await frame.land(pass, {
        paths: [gitopsPath],
        message:
          pass === 'infrastructure'
            ? `Scaffold ${options.cluster.name}: infrastructure layer\n\nFirst pass for ${options.cluster.domain} (${options.cluster.region}): the layers that bring up\nthe cluster's Sealed Secrets controller. Nothing is sealed yet.`
            : `Scaffold ${options.cluster.name}: all layers, credentials sealed\n\nSecond pass for ${options.cluster.domain} (${options.cluster.region}): every layer, with\ncredentials sealed by the cluster's own Sealed Secrets key.`,
        summary,
        // The newest commit touching the path is the pass's only for the pass that
        // wrote the current tree; on a rerun the infrastructure pass was superseded by the full one.
        landedBefore: async () =>
          (await frame.workspace().passCommit(options.cluster.name, pass)) ??
          (pass === 'all' || !supersededInfrastructure ? await frame.workspace().lastCommitTouching([gitopsPath]) : undefined),
      });
    };

    // What the runner does for each row of the step table (model/run-step-tables.ts): its skip rule and its function.
    const supplied = options.certificatePem !== undefined ? 'the sealing certificate was supplied' : undefined;
    const timeoutMs = options.controllerTimeoutMs ?? CONTROLLER_WAIT_MINUTES * 60_000;
    // Checked up front: when no certificate is supplied, a certificate source is.
    const source = (): SealingCertificateSource => deps.certificates!;
    let first: Awaited<ReturnType<typeof render>> | undefined;
    let certificatePem = options.certificatePem;
    const work: Readonly<Record<StepName, StepWork>> = {
      clone: frame.clone,
      'render-infrastructure': {
        message: () => 'rendering the infrastructure layer (nothing sealed)',
        run: async () => {
          first = await render('infrastructure');
          supersededInfrastructure = first.pass === 'all';
        },
      },
      'push-infrastructure': { message: () => 'committing and pushing the infrastructure layer', run: () => commitAndPush('infrastructure') },
      'wait-for-sealing-controller': {
        skip: () => supplied && `${supplied}; not waiting for the controller`,
        message: () => `waiting up to ${Math.round(timeoutMs / 1000)}s for Deployment ${controller.namespace}/${controller.name} to be Available`,
        run: () => source().waitForController(controller, { timeoutMs, ...(options.signal ? { signal: options.signal } : {}) }),
      },
      'fetch-sealing-certificate': {
        skip: () => supplied && `${supplied}; not fetching it`,
        message: () => `fetching the sealing certificate of ${controller.namespace}/${controller.name} through the API server`,
        run: async () => {
          const pem = await source().fetchCertificate(controller, options.signal ? { signal: options.signal } : {});
          // A certificate out of its validity window (or a weak key) fails this step, not the render.
          parseSealingCertificate(pem, 'certificate', new Date(now()));
          certificatePem = pem;
        },
      },
      'render-all': {
        message: () =>
          sameValues
            ? `re-encrypting the SealedSecrets through ${controller.namespace}/${controller.name} (same values, its newest key), then rendering every layer`
            : 'rendering every layer with fresh credentials sealed',
        run: async () => {
          if (first?.pass === 'all') log.info({ event: 'note' }, `${gitopsPath} already had its full tree; the second pass only refreshes it`);
          if (sameValues) {
            await reencryptThroughController(
              {
                workspace: frame.workspace(),
                source: source(),
                controller,
                log,
                generatorVersion: options.generatorVersion,
                ...(options.signal ? { signal: options.signal } : {}),
              },
              {
                cluster: options.cluster.name,
                certificate: parseSealingCertificate(certificatePem!, 'certificate', new Date(now())),
                rotate: options.rotateCredentials ?? true,
              },
            );
          }
          await render('all', certificatePem);
        },
      },
      'push-all': { message: () => 'committing and pushing every layer', run: () => commitAndPush('all') },
    };

    return {
      steps: SCAFFOLD_STEPS,
      work,
      result: () => {
        const scaffolded = `scaffolded ${gitopsPath}: ${frame.commits.map((c) => `${c.pass} ${c.sha.slice(0, 12)}`).join(', ')}`;
        return { message: followUp === undefined ? scaffolded : `${scaffolded}; ${freshValuesSummary(followUp)}` };
      },
    };
  });
}

/** Logs each password-change Job and the workloads to restart. */
function logFreshValues(followUp: FreshValuesFollowUp, log: Logger): void {
  for (const job of followUp.passwordChanges) {
    log.info(
      { event: 'password_change', namespace: job.namespace, credential: job.credential, job: job.job, file: job.file },
      `Job ${job.namespace}/${job.job} sets the new ${job.credential} passwords in the database (${job.file})`,
    );
  }
  log.info(
    { event: 'restart', workloads: followUp.restart, read_only: followUp.readOnly },
    `restart to pick up the new values: ${followUp.restart.join(', ') || 'nothing reads them'}`,
  );
}

/** The result's words for fresh values: the Jobs and the workloads to restart once they have run. */
function freshValuesSummary(followUp: FreshValuesFollowUp): string {
  const jobs = followUp.passwordChanges.map((j) => `${j.namespace}/${j.job}`);
  return `fresh values: ${jobs.length > 0 ? `Job(s) ${jobs.join(', ')} set the new passwords in the databases` : 'no database keeps them'}; restart ${followUp.restart.join(', ') || 'nothing (no workload reads them)'}`;
}

/** Adapts a repository verifier to the run's pre-push gate. */
export function verifierFor(
  verify: (
    dir: string,
    options: { readonly cluster?: string; readonly signal?: AbortSignal; readonly leaveOut?: readonly string[] },
  ) => ReturnType<WorkTreeVerifier>,
): WorkTreeVerifier {
  return (dir, cluster, signal, leaveOut) =>
    verify(dir, { cluster, ...(signal ? { signal } : {}), ...(leaveOut !== undefined && leaveOut.length > 0 ? { leaveOut } : {}) });
}
