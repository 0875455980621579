/**
 * Test support: the Sealed Secrets controller's HTTP endpoints behind the
 * Kubernetes API double's service proxy, written from the controller's source
 * at tag v0.36.6 of bitnami-labs/sealed-secrets (the newest in the stored
 * snapshot; the platform pins chart 2.19.3, which is newer): pkg/controller/server.go
 * (the handlers), pkg/controller/controller.go (`Rotate`, `attemptUnseal`),
 * pkg/controller/keyregistry.go (`latestPrivateKey`, `getCert`) and
 * pkg/apis/sealedsecrets/v1alpha1/sealedsecret_expansion.go (`Unseal`, `NewSealedSecret`).
 *
 * - `GET /v1/cert.pem` serves the newest key's certificate only (`application/x-pem-file`).
 * - `/v1/rotate` (server.go registers it without a method check): the body is
 *   decoded as a SealedSecret, so apiVersion `bitnami.com/v1alpha1` and kind
 *   `SealedSecret` are required; when its metadata differs from its template's,
 *   the metadata is copied into the template ("keep the original scope"); every
 *   value is decrypted with whichever held key opens it (old keys stay held
 *   after a renewal) and sealed again with the NEWEST key. The answer is
 *   `NewSealedSecret` marshalled: no apiVersion or kind, metadata with name,
 *   namespace and scope annotations only, the template holding the Secret's
 *   metadata. Status 200, and `text/plain; charset=utf-8`: server.go sets
 *   Content-Type after WriteHeader, where it has no effect, so Go sniffs the JSON.
 * - Anything `Rotate` fails on (a body it cannot decode, a value no held key
 *   opens) is `500` with an empty body: server.go writes only the status. The
 *   409 that kubeseal's ReEncryptSealedSecret looks for is /v1/verify's, never /v1/rotate's.
 *
 * Not modelled: `spec.template.data` templates, the deprecated `spec.data`, /v1/verify.
 * Sealing uses controller-unseal.ts (node:crypto), sharing no code with the product.
 */
import { isDeepStrictEqual } from 'node:util';
import type { TestCertificate } from '../../src/sealing/test-certificate.js';
import { controllerDecrypt, controllerEncrypt, controllerLabel } from './controller-unseal.js';
import type { KubeApiDouble, ProxyResponse } from './kube-api-double.js';

/** The controller's Deployment and Service. */
export interface ControllerPlace {
  readonly namespace: string;
  readonly name: string;
}

/** A controller double and its control surface. */
export interface SealedSecretsControllerDouble {
  /** A key renewal: `key` becomes the newest (cert.pem serves it, /v1/rotate seals with it); older keys stay held. */
  renewKey(key: TestCertificate): void;
  /** The keys it holds now, oldest first. */
  readonly keys: readonly TestCertificate[];
  /** How many /v1/rotate requests it answered 200 and 500. */
  readonly answered: { ok: number; failed: number };
}

const SCOPE_ANNOTATIONS = ['sealedsecrets.bitnami.com/namespace-wide', 'sealedsecrets.bitnami.com/cluster-wide'] as const;
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

type Json = Record<string, unknown>;
const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Puts a controller holding `first` behind `kube`'s service proxy, on a Service
 * whose first port is named `http` (as the chart names it), with its Deployment Available.
 */
export function serveSealedSecretsController(kube: KubeApiDouble, place: ControllerPlace, first: TestCertificate): SealedSecretsControllerDouble {
  const keys: TestCertificate[] = [first];
  const answered = { ok: 0, failed: 0 };
  // server.go writes only the status on a failure: no body, no content type.
  const failure = (): ProxyResponse => {
    answered.failed += 1;
    return { status: 500, headers: { 'Content-Length': '0' }, body: '' };
  };

  const rotate = (body: unknown): ProxyResponse => {
    if (!isJson(body) || body['apiVersion'] !== 'bitnami.com/v1alpha1' || body['kind'] !== 'SealedSecret') return failure();
    const metadata = isJson(body['metadata']) ? body['metadata'] : {};
    const spec = isJson(body['spec']) ? body['spec'] : {};
    const template = isJson(spec['template']) ? spec['template'] : {};
    const encrypted = isJson(spec['encryptedData']) ? spec['encryptedData'] : {};
    const name = String(metadata['name'] ?? '');
    const namespace = String(metadata['namespace'] ?? '');
    // controller.go Rotate: a template whose metadata differs takes the SealedSecret's.
    const templateMeta: Json = structuredClone(isDeepStrictEqual(metadata, template['metadata']) ? (template['metadata'] as Json) : metadata);
    const annotations = (isJson(metadata['annotations']) ? metadata['annotations'] : {}) as Record<string, string>;
    // Unseal: the label from the SealedSecret's own metadata, any held key.
    const label = controllerLabel({ metadata: { name, namespace, annotations }, spec: { encryptedData: {} } });
    const plaintexts: Record<string, Buffer> = {};
    try {
      for (const [key, value] of Object.entries(encrypted)) {
        const opened = keys
          .map((k) => {
            try {
              return controllerDecrypt(k.privateKey, label, String(value));
            } catch {
              return undefined;
            }
          })
          .find((p) => p !== undefined);
        if (opened === undefined) return failure();
        plaintexts[key] = opened;
      }
      // NewSealedSecret: the Secret's metadata (the template's, name and namespace set) becomes the new template's,
      // without owner references or kubectl's last-applied copy; the scope is the Secret's (its annotations).
      const secretMeta: Json = { ...templateMeta, name, namespace, creationTimestamp: null };
      delete secretMeta['ownerReferences'];
      if (isJson(secretMeta['annotations'])) delete (secretMeta['annotations'] as Json)[LAST_APPLIED];
      const secretAnnotations = (isJson(secretMeta['annotations']) ? secretMeta['annotations'] : {}) as Record<string, string>;
      const newestLabel = controllerLabel({ metadata: { name, namespace, annotations: secretAnnotations }, spec: { encryptedData: {} } });
      const newest = keys[keys.length - 1]!;
      const encryptedData = Object.fromEntries(
        Object.entries(plaintexts).map(([key, value]) => [key, controllerEncrypt(newest.publicKey, newestLabel, value)]),
      );
      // UpdateScopeAnnotations: only the scope's own annotation, "true", on the SealedSecret.
      const scope = SCOPE_ANNOTATIONS.find((a) => secretAnnotations[a] === 'true');
      const answer = {
        metadata: { name, namespace, creationTimestamp: null, ...(scope ? { annotations: { [scope]: 'true' } } : {}) },
        spec: {
          template: {
            metadata: secretMeta,
            ...(template['type'] !== undefined ? { type: template['type'] } : {}),
            ...(template['immutable'] !== undefined ? { immutable: template['immutable'] } : {}),
          },
          encryptedData,
        },
      };
      answered.ok += 1;
      return { status: 200, headers: { 'Content-Type': 'text/plain; charset=utf-8' }, body: JSON.stringify(answer) };
    } finally {
      for (const value of Object.values(plaintexts)) value.fill(0);
    }
  };

  kube.setService(place.namespace, place.name, { ports: [{ name: 'http', port: 8080 }] });
  kube.setDeploymentAvailable(place.namespace, place.name, true);
  kube.setProxyHandler(place.namespace, place.name, 'http', (request) => {
    if (request.path === '/v1/cert.pem')
      return { status: 200, headers: { 'Content-Type': 'application/x-pem-file' }, body: keys[keys.length - 1]!.certificatePem };
    if (request.path === '/v1/rotate') return rotate(request.body);
    // Go's ServeMux.
    return { status: 404, headers: { 'Content-Type': 'text/plain; charset=utf-8' }, body: '404 page not found\n' };
  });

  return {
    renewKey(key) {
      keys.push(key);
    },
    get keys() {
      return [...keys];
    },
    answered,
  };
}
