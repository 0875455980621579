/** The start form's delivery section: push, or pull/merge requests on a forge (docs/delivery.md). */
import { FORGES, type DeliveryValues } from './delivery-values';
import { describedBy, FieldNotes } from './secret-fields';

interface Props {
  readonly values: DeliveryValues;
  readonly onChange: (values: DeliveryValues) => void;
  readonly issues: ReadonlyMap<string, string>;
}

const MODES: readonly { readonly mode: DeliveryValues['mode']; readonly label: string }[] = [
  { mode: 'push', label: 'Push each pass to the branch' },
  { mode: 'pull_request', label: 'Open a pull/merge request per pass (a protected branch)' },
];

const invalid = (issue: string | undefined): 'true' | undefined => (issue === undefined ? undefined : 'true');

export function DeliveryFields({ values, onChange, issues }: Props) {
  const forgeIssue = issues.get('delivery-forge');
  const apiIssue = issues.get('delivery-api-url');
  return (
    <fieldset data-testid="delivery-fields">
      <legend>Delivery</legend>
      <div class="field radio-group" role="radiogroup" aria-labelledby="delivery-mode-label">
        <p id="delivery-mode-label" class="label">
          How the two passes reach the branch
        </p>
        {MODES.map(({ mode, label }) => (
          <div class="radio" key={mode}>
            <input type="radio" id={`delivery-mode-${mode}`} name="delivery-mode" value={mode} checked={values.mode === mode} onChange={() => onChange({ ...values, mode })} />
            <label for={`delivery-mode-${mode}`}>{label}</label>
          </div>
        ))}
      </div>
      {values.mode === 'pull_request' && (
        <>
          <div class="field-row">
            <div class="field">
              <label for="delivery-forge">Forge (required)</label>
              <select
                id="delivery-forge"
                name="forge"
                value={values.forge}
                onChange={(event) => onChange({ ...values, forge: (event.currentTarget as HTMLSelectElement).value as DeliveryValues['forge'] })}
                aria-describedby={describedBy('delivery-forge', forgeIssue)}
                aria-invalid={invalid(forgeIssue)}
              >
                <option value="">Choose…</option>
                {FORGES.map((forge) => (
                  <option key={forge.value} value={forge.value}>
                    {forge.label}
                  </option>
                ))}
              </select>
              <FieldNotes id="delivery-forge" hint="Who hosts the repository; its API opens the requests." issue={forgeIssue} />
            </div>
            <div class="field">
              <label for="delivery-api-url">Forge API URL</label>
              <input
                id="delivery-api-url"
                name="apiUrl"
                type="url"
                inputMode="url"
                autocomplete="off"
                spellcheck={false}
                value={values.apiUrl}
                onInput={(event) => onChange({ ...values, apiUrl: (event.currentTarget as HTMLInputElement).value })}
                aria-describedby={describedBy('delivery-api-url', apiIssue)}
                aria-invalid={invalid(apiIssue)}
              />
              <FieldNotes id="delivery-api-url" hint="Empty: derived from the repository URL (e.g. api.github.com for github.com)." issue={apiIssue} />
            </div>
          </div>
          <div class="field checkbox">
            <input type="checkbox" id="delivery-auto-merge" checked={values.autoMerge} onChange={(event) => onChange({ ...values, autoMerge: (event.currentTarget as HTMLInputElement).checked })} />
            <label for="delivery-auto-merge">Merge each request once its checks pass (otherwise the run waits for a person to merge it)</label>
          </div>
        </>
      )}
    </fieldset>
  );
}
