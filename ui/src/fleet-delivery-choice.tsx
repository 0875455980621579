/**
 * The delivery choice inside a cluster action's confirm step: push (the
 * default) or a pull/merge request, with the start form's fields and checks.
 * A pull request needs its forge before anything is sent; the service checks
 * everything again (and answers 503 without forge credentials of its own).
 */
import { useState } from 'preact/hooks';
import type { JSX } from 'preact';
import { DeliveryFields } from './delivery-fields';
import { deliveryIssues, deliveryRequest, EMPTY_DELIVERY, type DeliveryBody, type DeliveryValues } from './delivery-values';
import { deliveryWording, type FleetAction } from './fleet-delivery';

const NO_ISSUES: ReadonlyMap<string, string> = new Map();

export interface FleetDeliveryChoice {
  readonly values: DeliveryValues;
  readonly fields: JSX.Element;
  /** The delivery to send (undefined: pushed), or null when a field needs attention: the fields then say which. */
  take(): DeliveryBody | undefined | null;
  /** Back to push, as when the confirm step is left. */
  reset(): void;
}

export function useFleetDelivery(action: FleetAction, cluster: string): FleetDeliveryChoice {
  const [values, setValues] = useState<DeliveryValues>(EMPTY_DELIVERY);
  // Issues show once the operator tried to go on, not while they are still choosing.
  const [checked, setChecked] = useState(false);
  const fields = (
    <DeliveryFields
      idPrefix={`${action}-delivery`}
      wording={deliveryWording(action, cluster)}
      values={values}
      onChange={setValues}
      issues={checked ? deliveryIssues(values) : NO_ISSUES}
    />
  );
  return {
    values,
    fields,
    take: () => {
      setChecked(true);
      if (deliveryIssues(values).size > 0) {
        document.getElementById(`${action}-delivery-forge`)?.focus();
        return null;
      }
      return deliveryRequest(values).delivery;
    },
    reset: () => {
      setValues(EMPTY_DELIVERY);
      setChecked(false);
    },
  };
}
