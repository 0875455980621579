/**
 * How a new run's two passes reach the branch, as the start form holds it:
 * pushed (the default, nothing sent), or through pull/merge requests on a
 * forge. A GitHub App is offered only for pull requests on GitHub, the one
 * case the runner uses one. Pure (the forge table is too), so it is tested under Node.
 */
import { FORGES as FORGE_NAMES, type ForgeName, forgeDescriptor } from '../../src/model/forges.js';

export type Forge = ForgeName;

export interface DeliveryValues {
  readonly mode: 'push' | 'pull_request';
  /** Empty until chosen; required with pull_request. */
  readonly forge: Forge | '';
  readonly autoMerge: boolean;
  /** Empty: derived from the repository URL by the service. */
  readonly apiUrl: string;
}

/** The request field (docs/api.md `delivery`). */
export interface DeliveryBody {
  readonly mode: 'push' | 'pull_request';
  readonly auto_merge?: boolean;
  readonly forge?: Forge;
  readonly api_url?: string;
}

export const EMPTY_DELIVERY: DeliveryValues = { mode: 'push', forge: '', autoMerge: false, apiUrl: '' };

/** What the delivery section says: the start form's words for a run's two passes, or a fleet action's for its one commit. */
export interface DeliveryWording {
  readonly question: string;
  readonly push: string;
  readonly pullRequest: string;
  readonly forgeHint: string;
  readonly autoMerge: string;
}

export const SCAFFOLD_DELIVERY_WORDING: DeliveryWording = {
  question: 'How the two passes reach the branch',
  push: 'Push each pass to the branch',
  pullRequest: 'Open a pull/merge request per pass (a protected branch)',
  forgeHint: 'Who hosts the repository; its API opens the requests.',
  autoMerge: 'Merge each request once its checks pass (otherwise the run waits for a person to merge it)',
};

/** The forge picker's choices, in the forge table's order. */
export const FORGES: readonly { readonly value: Forge; readonly label: string }[] = FORGE_NAMES.map((value) => ({
  value,
  label: forgeDescriptor(value).pickerLabel,
}));

/** Input ids, the API fields that land on each, and their labels (for the error summary). */
export const DELIVERY_FIELDS: readonly { readonly id: string; readonly api: readonly string[]; readonly label: string }[] = [
  { id: 'delivery-forge', api: ['delivery.forge', 'delivery', 'delivery.mode'], label: 'Forge' },
  { id: 'delivery-api-url', api: ['delivery.api_url'], label: 'Forge API URL' },
];

/** Whether the run can use a GitHub App: pull requests on a forge that takes one (GitHub). */
export function usesGithubApp(values: DeliveryValues): boolean {
  return values.mode === 'pull_request' && values.forge !== '' && forgeDescriptor(values.forge).acceptsGithubApp;
}

/** The request's `delivery`, or nothing for a push (the service's default). */
export function deliveryRequest(values: DeliveryValues): { readonly delivery?: DeliveryBody } {
  if (values.mode === 'push') return {};
  return {
    delivery: {
      mode: 'pull_request',
      auto_merge: values.autoMerge,
      ...(values.forge === '' ? {} : { forge: values.forge }),
      ...(values.apiUrl.trim() === '' ? {} : { api_url: values.apiUrl.trim() }),
    },
  };
}

/** What the browser can tell before asking the service (which checks everything again). */
export function deliveryIssues(values: DeliveryValues): Map<string, string> {
  const issues = new Map<string, string>();
  if (values.mode === 'push') return issues;
  if (values.forge === '') issues.set('delivery-forge', 'Choose who hosts the repository: pull requests are opened through its API.');
  const apiUrl = values.apiUrl.trim();
  if (apiUrl !== '' && !/^https?:\/\/[^\s/]+/.test(apiUrl))
    issues.set('delivery-api-url', 'Enter the forge API’s URL, e.g. https://ghe.example.com/api/v3, or leave it empty.');
  return issues;
}
