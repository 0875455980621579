/**
 * New scaffold, the dashboard's start form: cluster name, domain and region
 * (plus, optionally, the repository and branch), the new cluster's sealing
 * certificate or kubeconfig, delivery and "wait until Flux reports Ready".
 * Step 2 is the preview (`POST /api/v1/scaffolds?dry_run=true`): the files
 * the scaffold would write, as a tree with change marks, and a diff of the
 * selected file; nothing is stored or pushed. Step 3, "Start this scaffold",
 * starts the real run and goes to its page.
 *
 * The role and providers are offered as the repository's layer catalog has
 * them (`GET /api/v1/catalog`, read again as the repository or branch is
 * edited): a select per attribute, its default chosen; none at all for a
 * platform without a catalog.
 *
 * The secrets (a kubeconfig, a registry pull secret, a repository token, a
 * GitHub App) go into the request body only (see secret-values.ts), and are
 * dropped from the form once the run was accepted. Delivery (push or pull
 * requests) is chosen beside them; a GitHub App is offered for GitHub only.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, createRun, dryRun, getCatalog, type CatalogAttribute, type DryRunResult, type ScaffoldRequestBody } from './api';
import { ErrorBox, messageOf } from './components';
import { DeliveryFields } from './delivery-fields';
import { DELIVERY_FIELDS, deliveryIssues, deliveryRequest, EMPTY_DELIVERY, usesGithubApp, type DeliveryValues } from './delivery-values';
import { DryRunResultCard } from './dry-run-result';
import { useTitle } from './hooks';
import { EMPTY_READINESS, READINESS_FIELDS, readinessIssues, readinessRequest, type ReadinessValues } from './readiness-values';
import { navigate, paths } from './router';
import { clearedSecrets, EMPTY_SECRETS, SECRET_FIELDS, SecretFields, secretIssues, secretsRequest, type SecretValues, FieldNotes } from './secret-fields';

interface FormValues {
  name: string;
  domain: string;
  region: string;
  role: string;
  infraProvider: string;
  dnsProvider: string;
  repositoryUrl: string;
  branch: string;
}

/** Input ids, and the API fields that land on each. */
const FIELDS: readonly { readonly id: string; readonly key: keyof FormValues; readonly api: readonly string[]; readonly label: string }[] = [
  { id: 'cluster-name', key: 'name', api: ['cluster.name', 'cluster'], label: 'Cluster name' },
  { id: 'cluster-domain', key: 'domain', api: ['cluster.domain'], label: 'Domain' },
  { id: 'cluster-region', key: 'region', api: ['cluster.region'], label: 'Region' },
  { id: 'cluster-role', key: 'role', api: ['cluster.role'], label: 'Role' },
  { id: 'cluster-infra-provider', key: 'infraProvider', api: ['cluster.infra_provider'], label: 'Infrastructure provider' },
  { id: 'cluster-dns-provider', key: 'dnsProvider', api: ['cluster.dns_provider'], label: 'DNS provider' },
  { id: 'repository-url', key: 'repositoryUrl', api: ['repository.url', 'repository'], label: 'Repository URL' },
  { id: 'repository-branch', key: 'branch', api: ['repository.branch'], label: 'Branch' },
];

/** Every field an API error can point at, with its label. */
const ALL_FIELDS: readonly { readonly id: string; readonly api: readonly string[]; readonly label: string }[] = [
  ...FIELDS,
  ...SECRET_FIELDS,
  ...DELIVERY_FIELDS,
  ...READINESS_FIELDS,
];

/** The form field of each catalog attribute. */
const ATTRIBUTE_FIELDS: Readonly<
  Record<
    CatalogAttribute['name'],
    { readonly id: string; readonly key: 'role' | 'infraProvider' | 'dnsProvider'; readonly label: string; readonly hint: string }
  >
> = {
  role: { id: 'cluster-role', key: 'role', label: 'Role', hint: 'What the cluster is for; the catalog picks layers by it.' },
  infra_provider: { id: 'cluster-infra-provider', key: 'infraProvider', label: 'Infrastructure provider', hint: 'Where the cluster runs.' },
  dns_provider: { id: 'cluster-dns-provider', key: 'dnsProvider', label: 'DNS provider', hint: 'Who serves the cluster’s DNS records.' },
};

/** How long the repository and branch must stay unchanged before their catalog is read. */
const CATALOG_DEBOUNCE_MS = 400;

type CatalogState =
  | { readonly state: 'loading' }
  | { readonly state: 'ready'; readonly attributes: readonly CatalogAttribute[] }
  | { readonly state: 'error'; readonly error: unknown };

const EMPTY: FormValues = { name: '', domain: '', region: '', role: '', infraProvider: '', dnsProvider: '', repositoryUrl: '', branch: '' };

function requestOf(values: FormValues, secretValues: SecretValues, delivery: DeliveryValues, readiness: ReadinessValues): ScaffoldRequestBody {
  const secrets = secretsRequest(secretValues, usesGithubApp(delivery));
  const repository = {
    ...(values.repositoryUrl.trim() === '' ? {} : { url: values.repositoryUrl.trim() }),
    ...(values.branch.trim() === '' ? {} : { branch: values.branch.trim() }),
    ...secrets.repository,
  };
  // The catalog attributes only when given: a platform without a layer catalog takes none.
  const attributes = {
    ...(values.role.trim() === '' ? {} : { role: values.role.trim() }),
    ...(values.infraProvider.trim() === '' ? {} : { infra_provider: values.infraProvider.trim() }),
    ...(values.dnsProvider.trim() === '' ? {} : { dns_provider: values.dnsProvider.trim() }),
  };
  return {
    cluster: { name: values.name.trim(), domain: values.domain.trim(), region: values.region.trim(), ...attributes },
    ...secrets,
    ...(Object.keys(repository).length === 0 ? {} : { repository }),
    ...deliveryRequest(delivery),
    ...readinessRequest(readiness),
  };
}

/** What the browser can tell before asking the service (which checks everything again). */
function localIssues(values: FormValues, secrets: SecretValues, delivery: DeliveryValues, readiness: ReadinessValues): Map<string, string> {
  const issues = new Map<string, string>();
  if (values.name.trim() === '') issues.set('cluster-name', 'Enter the cluster name.');
  else if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(values.name.trim()))
    issues.set('cluster-name', 'Use lower-case letters, digits and "-" (a DNS label, at most 63 characters).');
  if (values.domain.trim() === '') issues.set('cluster-domain', 'Enter the cluster’s domain.');
  if (values.region.trim() === '') issues.set('cluster-region', 'Enter the region.');
  for (const [id, value] of [
    ['cluster-role', values.role],
    ['cluster-infra-provider', values.infraProvider],
    ['cluster-dns-provider', values.dnsProvider],
  ] as const) {
    if (value.trim() !== '' && !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(value.trim())) issues.set(id, 'Use a lower-case label: letters, digits and "-".');
  }
  for (const [id, message] of [...secretIssues(secrets, usesGithubApp(delivery)), ...deliveryIssues(delivery), ...readinessIssues(readiness, secrets.mode)])
    issues.set(id, message);
  return issues;
}

export function NewScaffoldPage() {
  useTitle('New scaffold');
  const [values, setValues] = useState<FormValues>(EMPTY);
  const [secrets, setSecrets] = useState<SecretValues>(EMPTY_SECRETS);
  const [delivery, setDelivery] = useState<DeliveryValues>(EMPTY_DELIVERY);
  const [readiness, setReadiness] = useState<ReadinessValues>(EMPTY_READINESS);
  const [issues, setIssues] = useState<Map<string, string>>(new Map());
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [result, setResult] = useState<{ request: ScaffoldRequestBody; preview: DryRunResult } | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const [starting, setStarting] = useState(false);
  const [startError, setStartError] = useState<unknown>(null);
  const summary = useRef<HTMLDivElement>(null);
  const resultHeading = useRef<HTMLHeadingElement>(null);
  const controller = useRef<AbortController | null>(null);
  useEffect(() => () => controller.current?.abort(), []);
  const [catalog, setCatalog] = useState<CatalogState>({ state: 'loading' });

  // The catalog of the repository being entered (the default one when empty).
  const catalogUrl = values.repositoryUrl.trim();
  const catalogBranch = values.branch.trim();
  useEffect(() => {
    const abort = new AbortController();
    setCatalog({ state: 'loading' });
    const timer = setTimeout(() => {
      getCatalog(catalogUrl, catalogBranch, abort.signal).then(
        ({ attributes }) => {
          if (abort.signal.aborted) return;
          setCatalog({ state: 'ready', attributes });
          // A value the catalog knows is kept; otherwise its default. Attributes it lacks are not sent.
          setValues((previous) => {
            const next = { ...previous, role: '', infraProvider: '', dnsProvider: '' };
            for (const attribute of attributes) {
              const key = ATTRIBUTE_FIELDS[attribute.name].key;
              next[key] = attribute.values.includes(previous[key]) ? previous[key] : (attribute.default ?? '');
            }
            return next;
          });
        },
        (caught: unknown) => {
          if (abort.signal.aborted) return;
          setCatalog({ state: 'error', error: caught });
          setValues((previous) => ({ ...previous, role: '', infraProvider: '', dnsProvider: '' }));
        },
      );
    }, CATALOG_DEBOUNCE_MS);
    return () => {
      clearTimeout(timer);
      abort.abort();
    };
  }, [catalogUrl, catalogBranch]);

  const set = (key: keyof FormValues) => (event: Event) => {
    const value = (event.currentTarget as HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement).value;
    setValues((previous) => ({ ...previous, [key]: value }));
  };

  const showIssues = (found: Map<string, string>) => {
    setIssues(found);
    // The error summary takes focus so it is read out; its links lead to the fields.
    setTimeout(() => summary.current?.focus(), 0);
  };

  /** Shows the service's field errors beside their fields. */
  const showApiIssues = (caught: ApiError) => {
    const fromApi = new Map<string, string>();
    for (const issue of caught.fields) {
      const field = ALL_FIELDS.find((f) => f.api.includes(issue.field)) ?? ALL_FIELDS.find((f) => f.api.some((a) => issue.field.startsWith(`${a}.`)));
      const id = field?.id ?? 'form';
      fromApi.set(id, fromApi.has(id) ? `${fromApi.get(id) ?? ''} ${issue.message}` : issue.message);
    }
    showIssues(fromApi);
  };

  /** The request, or undefined (with the issues shown) when the form is not complete. */
  const checkedRequest = (): ScaffoldRequestBody | undefined => {
    const found = localIssues(values, secrets, delivery, readiness);
    if (found.size > 0) {
      showIssues(found);
      return undefined;
    }
    setIssues(new Map());
    return requestOf(values, secrets, delivery, readiness);
  };

  /** Starts the run straight from the form, without a preview. */
  const startNow = async () => {
    const request = checkedRequest();
    if (request === undefined) return;
    setStarting(true);
    setError(null);
    try {
      const accepted = await createRun(request);
      setSecrets(clearedSecrets);
      navigate(paths.run(accepted.id));
    } catch (caught) {
      setStarting(false);
      if (caught instanceof ApiError && caught.fields.length > 0) showApiIssues(caught);
      else setError(caught);
    }
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    const request = checkedRequest();
    if (request === undefined) return;
    setError(null);
    setStartError(null);
    setBusy(true);
    controller.current?.abort();
    const abort = new AbortController();
    controller.current = abort;
    try {
      const preview = await dryRun(request, abort.signal);
      setResult({ request, preview });
      const first = preview.files.find((f) => f.change !== 'unchanged') ?? preview.files[0];
      setSelected(first?.path ?? null);
      setTimeout(() => resultHeading.current?.focus(), 0);
    } catch (caught) {
      if (abort.signal.aborted) return;
      if (caught instanceof ApiError && caught.fields.length > 0) {
        showApiIssues(caught);
      } else {
        setError(caught);
      }
    } finally {
      if (controller.current === abort) setBusy(false);
    }
  };

  const start = async () => {
    if (result === null) return;
    setStarting(true);
    setStartError(null);
    try {
      const accepted = await createRun(result.request);
      // The previewed request held the secrets too.
      setSecrets(clearedSecrets);
      setResult(null);
      navigate(paths.run(accepted.id));
    } catch (caught) {
      setStartError(caught);
      setStarting(false);
    }
  };

  const field = (id: string, key: keyof FormValues, label: string, hint: string, props: Record<string, unknown> = {}) => {
    const issue = issues.get(id);
    return (
      <div class="field">
        <label for={id}>{label}</label>
        <input
          id={id}
          name={key}
          value={values[key]}
          onInput={set(key)}
          aria-describedby={`${id}-hint${issue === undefined ? '' : ` ${id}-error`}`}
          aria-invalid={issue === undefined ? undefined : 'true'}
          autocomplete="off"
          spellcheck={false}
          {...props}
        />
        <FieldNotes id={id} hint={hint} issue={issue} />
      </div>
    );
  };

  const select = (attribute: CatalogAttribute) => {
    const { id, key, label, hint } = ATTRIBUTE_FIELDS[attribute.name];
    const issue = issues.get(id);
    return (
      <div class="field" key={id}>
        <label for={id}>{label}</label>
        <select
          id={id}
          name={key}
          value={values[key]}
          onChange={set(key)}
          aria-describedby={`${id}-hint${issue === undefined ? '' : ` ${id}-error`}`}
          aria-invalid={issue === undefined ? undefined : 'true'}
        >
          {attribute.default === undefined && <option value="">Not set</option>}
          {attribute.values.map((value) => (
            <option key={value} value={value}>
              {value === attribute.default ? `${value} (default)` : value}
            </option>
          ))}
        </select>
        <FieldNotes id={id} hint={hint} issue={issue} />
      </div>
    );
  };

  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>New scaffold</h1>
        <p class="lede">Writes a new cluster’s Flux tree, seals its credentials and pushes it.</p>
        <ol class="wizard-steps" aria-label="Steps">
          <li aria-current={result === null ? 'step' : undefined}>Describe the cluster</li>
          <li aria-current={result !== null ? 'step' : undefined}>Preview the files (a dry run: nothing is stored or pushed)</li>
          <li>Start the scaffold and follow its run</li>
        </ol>
      </div>

      <form class="card dry-run-form" onSubmit={submit} noValidate aria-describedby="dry-run-intro">
        <p id="dry-run-intro" class="hint">
          Fields marked required must be filled in; the others have defaults.
        </p>
        {issues.size > 0 && (
          <div class="error-box" role="alert" tabIndex={-1} ref={summary} aria-labelledby="issues-title">
            <p id="issues-title" class="error-title">
              {issues.size === 1 ? 'One field needs attention' : `${issues.size} fields need attention`}
            </p>
            <ul>
              {[...issues].map(([id, message]) => (
                <li key={id}>
                  {id === 'form' ? (
                    message
                  ) : (
                    <a
                      href={`#${id}`}
                      onClick={(event) => {
                        event.preventDefault();
                        document.getElementById(id)?.focus();
                      }}
                    >
                      {ALL_FIELDS.find((f) => f.id === id)?.label ?? id}: {message}
                    </a>
                  )}
                </li>
              ))}
            </ul>
          </div>
        )}
        <fieldset>
          <legend>Cluster</legend>
          <div class="field-row">
            {field('cluster-name', 'name', 'Cluster name (required)', 'A DNS label, e.g. eu-prod-1.', { required: true, maxLength: 63 })}
            {field('cluster-domain', 'domain', 'Domain (required)', 'Every service is served as <host>.<domain>, e.g. eu-prod-1.example.net.', {
              required: true,
            })}
            {field('cluster-region', 'region', 'Region (required)', 'The cloud region, e.g. eu-west-1.', { required: true })}
          </div>
          <div class="catalog" data-catalog={catalog.state}>
            {catalog.state === 'ready' && catalog.attributes.length > 0 && (
              <>
                <p class="hint">The repository’s layer catalog picks the cluster’s layers by these.</p>
                <div class="field-row">{catalog.attributes.map(select)}</div>
              </>
            )}
            <p class="muted" role="status">
              {catalog.state === 'loading'
                ? 'Reading the repository’s layer catalog…'
                : catalog.state === 'error'
                  ? `The layer catalog could not be read: ${messageOf(catalog.error)}`
                  : ''}
            </p>
          </div>
        </fieldset>
        <fieldset>
          <legend>Repository</legend>
          <div class="field-row">
            {field('repository-url', 'repositoryUrl', 'Repository URL', "Empty: the service's default repository.", { type: 'url', inputMode: 'url' })}
            {field('repository-branch', 'branch', 'Branch', 'Empty: main.')}
          </div>
        </fieldset>
        <DeliveryFields values={delivery} onChange={setDelivery} issues={issues} />
        <SecretFields values={secrets} onChange={setSecrets} issues={issues} githubApp={usesGithubApp(delivery)} />
        <ReadinessFields values={readiness} onChange={setReadiness} issues={issues} />
        <div class="form-actions">
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Rendering…' : 'Preview the files'}
          </button>
          <button type="button" class="secondary" onClick={() => void startNow()} disabled={busy || starting}>
            {starting ? 'Starting…' : 'Start without a preview'}
          </button>
          {busy && (
            <span class="muted" role="status">
              Cloning the repository and rendering the tree…
            </span>
          )}
        </div>
      </form>

      {error !== null && <ErrorBox title="The dry run failed" error={error} />}

      {result !== null && (
        <DryRunResultCard
          preview={result.preview}
          selected={selected}
          onSelect={setSelected}
          headingRef={resultHeading}
          starting={starting}
          startError={startError}
          onStart={() => void start()}
        />
      )}
    </>
  );
}

/** "Wait until Flux reports Ready" and how long. */
function ReadinessFields({
  values,
  onChange,
  issues,
}: {
  values: ReadinessValues;
  onChange: (next: ReadinessValues) => void;
  issues: ReadonlyMap<string, string>;
}) {
  const waitIssue = issues.get('wait-for-ready');
  const timeoutIssue = issues.get('ready-timeout');
  return (
    <fieldset>
      <legend>After the push</legend>
      <div class="field checkbox">
        <input
          type="checkbox"
          id="wait-for-ready"
          name="wait_for_ready"
          checked={values.wait}
          onChange={(event) => onChange({ ...values, wait: (event.currentTarget as HTMLInputElement).checked })}
          aria-describedby={`wait-for-ready-hint${waitIssue === undefined ? '' : ' wait-for-ready-error'}`}
          aria-invalid={waitIssue === undefined ? undefined : 'true'}
        />
        <label for="wait-for-ready">Wait until Flux reports Ready</label>
        <FieldNotes
          id="wait-for-ready"
          hint="The run waits until the cluster’s Flux Kustomizations are Ready at the pushed commit, and fails naming those that are not. Needs the kubeconfig."
          issue={waitIssue}
        />
      </div>
      {values.wait && (
        <div class="field">
          <label for="ready-timeout">Ready timeout (seconds)</label>
          <input
            id="ready-timeout"
            name="ready_timeout_seconds"
            inputMode="numeric"
            value={values.timeout}
            placeholder="900"
            onInput={(event) => onChange({ ...values, timeout: (event.currentTarget as HTMLInputElement).value })}
            aria-describedby={`ready-timeout-hint${timeoutIssue === undefined ? '' : ' ready-timeout-error'}`}
            aria-invalid={timeoutIssue === undefined ? undefined : 'true'}
          />
          <FieldNotes id="ready-timeout" hint="10 to 7200; empty: 900." issue={timeoutIssue} />
        </div>
      )}
    </fieldset>
  );
}
