/** A table of a run's pull/merge requests (a scaffold's passes, an upgrade's or a removal's one): what each one delivered, its link and its state. */
import type { ComponentChildren } from 'preact';
import { ReviewStateBadge } from './components';
import type { ShownRequest } from './review-requests';

export interface RequestRow {
  readonly request: ShownRequest;
  /** The first column: the pass the request delivered. */
  readonly what: ComponentChildren;
}

export function RequestTable({ caption, column, rows }: { caption: string; column: string; rows: readonly RequestRow[] }) {
  return (
    <table class="commits">
      <caption class="sr-only">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">{column}</th>
          <th scope="col">Request</th>
          <th scope="col">State</th>
        </tr>
      </thead>
      <tbody>
        {rows.map(({ request, what }) => (
          <tr key={request.key} data-testid="review-request">
            <td>{what}</td>
            <td>
              <RequestLink request={request} />
              {request.branch !== undefined && (
                <span class="request-branch">
                  <span class="muted">from</span> <code class="wrap">{request.branch}</code>
                </span>
              )}
            </td>
            <td>
              <ReviewStateBadge state={request.state} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The request's forge and number, linked in a new tab when its URL is a web page; otherwise the URL as text. */
export function RequestLink({ request }: { request: ShownRequest }) {
  return request.href === undefined ? (
    <code class="wrap">{request.url}</code>
  ) : (
    <a href={request.href} target="_blank" rel="noopener noreferrer" data-testid="review-request-link">
      {request.forge} {request.label}
      <span class="sr-only"> (opens the request in a new tab)</span>
    </a>
  );
}
