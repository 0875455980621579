/**
 * The platform's prerequisites as verify reads them from the repository's
 * scaffold.yaml. A repository without one (any Flux repository, such as
 * flux2-kustomize-helm-example) has none: the checks that need them then
 * note what they cannot know rather than fail.
 */
import { ValidationError } from '../errors.js';
import { PLATFORM_DESCRIPTOR_PATH, parsePlatformDescriptor } from '../gitops/platform-descriptor.js';
import type { PlatformPrerequisites } from '../gitops/platform-prerequisites.js';
import type { RepoReader } from '../gitops/repo-reader.js';
import type { Finding } from './finding.js';

/** The prerequisites, and a finding per problem of a scaffold.yaml that does not parse. */
export async function readPrerequisites(reader: RepoReader): Promise<{ value: PlatformPrerequisites; findings: Finding[] }> {
  const text = await reader.read(PLATFORM_DESCRIPTOR_PATH);
  if (text === undefined) return { value: {}, findings: [] };
  try {
    const { targetFlux, charts, artifacts, bootstrap, provided, attributes, credentials } = parsePlatformDescriptor(text);
    const infraPlatforms = attributes?.infra_provider?.platform;
    const suppliedPullSecrets = credentials.filter((c) => Object.values(c.keys).some((s) => 'supplied' in s)).map((c) => `${c.namespace}/${c.name}`);
    return {
      value: {
        ...(targetFlux !== undefined ? { targetFlux } : {}),
        ...(charts !== undefined ? { charts } : {}),
        ...(artifacts ? { artifacts } : {}),
        ...(bootstrap ? { bootstrap } : {}),
        ...(provided ? { provided } : {}),
        ...(infraPlatforms && Object.keys(infraPlatforms).length > 0 ? { infraPlatforms } : {}),
        ...(suppliedPullSecrets.length > 0 ? { suppliedPullSecrets } : {}),
      },
      findings: [],
    };
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return { value: {}, findings: error.issues.map((issue) => ({ file: PLATFORM_DESCRIPTOR_PATH, message: `${issue.field}: ${issue.message}` })) };
  }
}
