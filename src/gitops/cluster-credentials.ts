/**
 * The credential step of a render: which of scaffold.yaml's credentials this
 * pass seals, checked so that nothing is sealed into a layer the cluster does
 * not get and no value is taken from a credential the render leaves out.
 */
import { ValidationError } from '../errors.js';
import type { ClusterSpec } from '../model/cluster-spec.js';
import { FLUX_CREDENTIAL_LAYER, PLATFORM_DESCRIPTOR_PATH, type CredentialSpec, type PlatformDescriptor } from './platform-descriptor.js';
import type { RenderOptions, RenderPass } from './render-types.js';
import { renderSealedCredentials, type CredentialOutcome } from './sealed-credentials.js';

/** Inputs of {@link sealClusterCredentials}. */
export interface ClusterCredentialsInput {
  readonly descriptor: PlatformDescriptor;
  readonly pass: RenderPass;
  readonly cluster: ClusterSpec;
  /** Every overlay directory a layer of the platform has. */
  readonly layerDirs: ReadonlySet<string>;
  /** The overlay directories this render writes. */
  readonly includedDirs: ReadonlySet<string>;
  /** The cluster directory's files now, relative to it: sealed credentials there are kept. */
  readonly existing: ReadonlyMap<string, string>;
  readonly options: Pick<RenderOptions, 'certificate' | 'registryAuth' | 'notificationAddress' | 'rotateCredentials' | 'random'>;
}

/** What the credential step sealed. */
export interface ClusterCredentials {
  /** The credentials this render seals. */
  readonly credentials: readonly CredentialSpec[];
  /** Sealed files, relative to the cluster directory. */
  readonly files: ReadonlyMap<string, string>;
  readonly outcomes: CredentialOutcome[];
}

/**
 * Seals the credentials of the layers this pass renders.
 * @throws ValidationError for a credential of an unknown layer, a `sameAs` across the pass, or sealing without a certificate
 */
export function sealClusterCredentials(input: ClusterCredentialsInput): ClusterCredentials {
  const { descriptor, pass, layerDirs, includedDirs, options } = input;
  for (const credential of descriptor.credentials) {
    if (credential.layer !== FLUX_CREDENTIAL_LAYER && !layerDirs.has(credential.layer)) {
      throw new ValidationError([
        {
          field: PLATFORM_DESCRIPTOR_PATH,
          message: `credential ${credential.namespace}/${credential.name} names layer ${JSON.stringify(credential.layer)}, which the reference environment does not have`,
        },
      ]);
    }
  }
  // Flux's own credentials (the substitution Secret) are sealed with the rest, in the second pass.
  const credentials = descriptor.credentials.filter((c) => (c.layer === FLUX_CREDENTIAL_LAYER ? pass === 'all' : includedDirs.has(c.layer)));
  // A value taken from another credential needs that credential in the same render.
  for (const c of credentials) {
    for (const source of Object.values(c.keys)) {
      if (!('sameAs' in source)) continue;
      const [namespace, name] = source.sameAs.split('/');
      const target = descriptor.credentials.find((o) => o.namespace === namespace && o.name === name)!;
      if (!credentials.includes(target)) {
        throw new ValidationError([
          {
            field: `${PLATFORM_DESCRIPTOR_PATH}.credentials.${c.namespace}/${c.name}`,
            message: `takes ${source.sameAs} from a credential of layer ${target.layer}, which this ${pass === 'all' ? 'cluster does not get' : 'pass does not render'}`,
          },
        ]);
      }
    }
  }
  const sealed = renderSealedCredentials({
    credentials,
    existing: input.existing,
    ...(options.certificate ? { certificate: options.certificate } : {}),
    ...(options.registryAuth !== undefined ? { registryAuth: options.registryAuth } : {}),
    ...(options.notificationAddress !== undefined ? { notificationAddress: options.notificationAddress } : {}),
    rotate: options.rotateCredentials ?? false,
    random: options.random,
  });
  // An omitted credential (supplied by nobody) is not sealed: its layer lists no sealed/ for it.
  const omitted = new Set(sealed.outcomes.filter((o) => o.action === 'omitted').map((o) => `${o.namespace}/${o.name}`));
  const written = credentials.filter((c) => !omitted.has(`${c.namespace}/${c.name}`));
  return { credentials: written, files: sealed.files, outcomes: sealed.outcomes };
}
