/** The delivery section of the start form and of a cluster's upgrade and removal: push, or pull/merge requests on a forge (docs/delivery.md). */
import { FORGES, SCAFFOLD_DELIVERY_WORDING, type DeliveryValues, type DeliveryWording } from './delivery-values';
import { describedBy, FieldNotes } from './secret-fields';

interface Props {
  readonly values: DeliveryValues;
  readonly onChange: (values: DeliveryValues) => void;
  /** Keyed by the start form's ids (`delivery-forge`, `delivery-api-url`), whatever `idPrefix` is. */
  readonly issues: ReadonlyMap<string, string>;
  /** Its inputs' ids start with this (default `delivery`): a page showing two sections keeps their ids apart. */
  readonly idPrefix?: string;
  /** @default the start form's words for a run's two passes */
  readonly wording?: DeliveryWording;
}

const MODES: readonly { readonly mode: DeliveryValues['mode']; readonly label: keyof DeliveryWording }[] = [
  { mode: 'push', label: 'push' },
  { mode: 'pull_request', label: 'pullRequest' },
];

const invalid = (issue: string | undefined): 'true' | undefined => (issue === undefined ? undefined : 'true');

export function DeliveryFields({ values, onChange, issues, idPrefix = 'delivery', wording = SCAFFOLD_DELIVERY_WORDING }: Props) {
  const id = (name: string) => `${idPrefix}-${name}`;
  const forgeIssue = issues.get('delivery-forge');
  const apiIssue = issues.get('delivery-api-url');
  return (
    <fieldset data-testid={id('fields')}>
      <legend>Delivery</legend>
      <div class="field radio-group" role="radiogroup" aria-labelledby={id('mode-label')}>
        <p id={id('mode-label')} class="label">
          {wording.question}
        </p>
        {MODES.map(({ mode, label }) => (
          <div class="radio" key={mode}>
            <input
              type="radio"
              id={id(`mode-${mode}`)}
              name={id('mode')}
              value={mode}
              checked={values.mode === mode}
              onChange={() => onChange({ ...values, mode })}
            />
            <label for={id(`mode-${mode}`)}>{wording[label]}</label>
          </div>
        ))}
      </div>
      {values.mode === 'pull_request' && (
        <>
          <div class="field-row">
            <div class="field">
              <label for={id('forge')}>Forge (required)</label>
              <select
                id={id('forge')}
                name="forge"
                value={values.forge}
                onChange={(event) => onChange({ ...values, forge: (event.currentTarget as HTMLSelectElement).value as DeliveryValues['forge'] })}
                aria-describedby={describedBy(id('forge'), forgeIssue)}
                aria-invalid={invalid(forgeIssue)}
              >
                <option value="">Choose…</option>
                {FORGES.map((forge) => (
                  <option key={forge.value} value={forge.value}>
                    {forge.label}
                  </option>
                ))}
              </select>
              <FieldNotes id={id('forge')} hint={wording.forgeHint} issue={forgeIssue} />
            </div>
            <div class="field">
              <label for={id('api-url')}>Forge API URL</label>
              <input
                id={id('api-url')}
                name="apiUrl"
                type="url"
                inputMode="url"
                autocomplete="off"
                spellcheck={false}
                value={values.apiUrl}
                onInput={(event) => onChange({ ...values, apiUrl: (event.currentTarget as HTMLInputElement).value })}
                aria-describedby={describedBy(id('api-url'), apiIssue)}
                aria-invalid={invalid(apiIssue)}
              />
              <FieldNotes id={id('api-url')} hint="Empty: derived from the repository URL (e.g. api.github.com for github.com)." issue={apiIssue} />
            </div>
          </div>
          <div class="field checkbox">
            <input
              type="checkbox"
              id={id('auto-merge')}
              checked={values.autoMerge}
              onChange={(event) => onChange({ ...values, autoMerge: (event.currentTarget as HTMLInputElement).checked })}
            />
            <label for={id('auto-merge')}>{wording.autoMerge}</label>
          </div>
        </>
      )}
    </fieldset>
  );
}
