/**
 * The cluster's Flux dependency graph at the run's last commit: the SVG of
 * `generate-gitops-env graph` shown as an <img> of a blob (an image cannot run
 * script, whatever the SVG held), and the same graph as a table, which is also
 * the text alternative of the picture.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, graphJson, graphSvg, type GraphJson, type RunDetail } from './api';
import { messageOf } from './components';
import { shortSha } from './format';

type GraphState =
  | { readonly kind: 'idle' }
  | { readonly kind: 'loading' }
  | { readonly kind: 'ready'; readonly url: string; readonly graph: GraphJson }
  | { readonly kind: 'error'; readonly message: string; readonly notYet: boolean };

export function GraphPanel({ run }: { run: RunDetail }) {
  const final = run.status !== 'pending' && run.status !== 'running';
  const lastSha = run.commits.at(-1)?.sha;
  // Drawable once the run pushed a commit; a run that succeeded without one (nothing changed) has the branch head as its tree.
  const drawable = run.gitops_path !== null && (lastSha !== undefined || run.status === 'succeeded');
  const key = drawable ? `${run.id}@${lastSha ?? 'head'}` : null;
  const [state, setState] = useState<GraphState>({ kind: 'idle' });
  const [reload, setReload] = useState(0);
  const [actualSize, setActualSize] = useState(false);

  useEffect(() => {
    if (key === null) {
      setState({ kind: 'idle' });
      return;
    }
    const controller = new AbortController();
    let url: string | undefined;
    setState({ kind: 'loading' });
    void (async () => {
      try {
        const [blob, graph] = await Promise.all([graphSvg(run.id, controller.signal), graphJson(run.id, controller.signal)]);
        if (controller.signal.aborted) return;
        url = URL.createObjectURL(blob);
        setState({ kind: 'ready', url, graph });
      } catch (error) {
        if (controller.signal.aborted) return;
        setState({ kind: 'error', message: messageOf(error), notYet: error instanceof ApiError && (error.status === 404 || error.status === 409) });
      }
    })();
    return () => {
      controller.abort();
      if (url !== undefined) URL.revokeObjectURL(url);
    };
  }, [key, reload]);

  const where = run.gitops_path ?? `clusters/${run.cluster.name}`;
  return (
    <section class="card graph-panel" aria-labelledby="graph-heading" aria-busy={state.kind === 'loading' ? 'true' : 'false'}>
      <div class="section-head">
        <h2 id="graph-heading">Flux dependency graph</h2>
        <div class="actions">
          {state.kind === 'ready' && (
            <button type="button" class="secondary" aria-pressed={actualSize ? 'true' : 'false'} onClick={() => setActualSize(!actualSize)}>
              Actual size
            </button>
          )}
          {key !== null && (
            <button type="button" class="secondary" onClick={() => setReload(reload + 1)} disabled={state.kind === 'loading'}>
              Reload graph
            </button>
          )}
        </div>
      </div>
      <p class="muted">
        {where}
        {lastSha !== undefined ? (
          <>
            {' '}
            at <code title={lastSha}>{shortSha(lastSha)}</code>
          </>
        ) : (
          ''
        )}
      </p>
      {key === null && (
        <p class="muted">{final ? 'This run pushed no tree: there is no graph to draw.' : 'The graph is drawn once the run has pushed the cluster’s tree.'}</p>
      )}
      {state.kind === 'loading' && <p class="muted">Drawing the graph…</p>}
      {state.kind === 'error' && (
        <p class={state.notYet ? 'notice' : 'error-box'} role="status">
          No graph: {state.message}
        </p>
      )}
      {state.kind === 'ready' && (
        <>
          <figure class={`graph-figure${actualSize ? ' actual' : ''}`}>
            <img
              src={state.url}
              alt={`Flux dependency graph of ${where}: ${describe(state.graph)} The table below lists each Kustomization.`}
              data-testid="flux-graph"
            />
          </figure>
          <div class="table-wrap">
            <table class="graph-nodes">
              <caption>Kustomizations, in apply order</caption>
              <thead>
                <tr>
                  <th scope="col">Kustomization</th>
                  <th scope="col">Path</th>
                  <th scope="col">Depends on</th>
                  <th scope="col">Health checks</th>
                </tr>
              </thead>
              <tbody>
                {orderedNodes(state.graph).map((node) => (
                  <tr key={node.id} data-node={node.name}>
                    <th scope="row">
                      {node.namespace === 'flux-system' ? node.name : node.id}
                      {node.suspended === true && (
                        <>
                          {' '}
                          <span
                            class="badge badge-skipped"
                            title="spec.suspend: true — an opt-in layer this cluster has not enabled; it applies nothing until resumed, and is not failed"
                          >
                            suspended
                          </span>
                        </>
                      )}
                    </th>
                    <td>
                      <code>{node.path}</code>
                    </td>
                    <td>
                      {node.dependsOn.length === 0 ? <span class="muted">nothing</span> : node.dependsOn.map((d) => d.replace(/^flux-system\//, '')).join(', ')}
                    </td>
                    <td>
                      {node.healthChecks.length === 0 && !node.wait ? (
                        <span class="muted">none</span>
                      ) : (
                        <ul class="plain">
                          {node.healthChecks.map((h) => (
                            <li key={`${h.kind}/${h.namespace ?? ''}/${h.name}`}>
                              {h.kind}/{h.namespace === undefined ? '' : `${h.namespace}/`}
                              {h.name}
                            </li>
                          ))}
                          {node.wait && <li>wait: all resources</li>}
                        </ul>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}

function orderedNodes(graph: GraphJson): GraphJson['nodes'] {
  const position = new Map(graph.order.map((id, index) => [id, index]));
  return [...graph.nodes].sort((a, b) => (position.get(a.id) ?? 1e9) - (position.get(b.id) ?? 1e9) || a.id.localeCompare(b.id));
}

function describe(graph: GraphJson): string {
  const name = (id: string) => id.replace(/^flux-system\//, '');
  const roots = graph.nodes.filter((n) => n.dependsOn.length === 0).map((n) => name(n.id));
  const dependents = graph.nodes.filter((n) => n.dependsOn.length > 0).map((n) => `${name(n.id)} depends on ${n.dependsOn.map(name).join(' and ')}`);
  const parts = [`${graph.nodes.length} Kustomizations.`];
  if (roots.length > 0) parts.push(`${roots.join(', ')} ${roots.length === 1 ? 'has' : 'have'} no dependencies.`);
  if (dependents.length > 0) parts.push(`${dependents.join('; ')}.`);
  const suspended = graph.nodes.filter((n) => n.suspended === true).map((n) => name(n.id));
  if (suspended.length > 0) parts.push(`${suspended.join(', ')} ${suspended.length === 1 ? 'is' : 'are'} suspended (opt-in, not enabled on this cluster).`);
  if (graph.cycles.length > 0) parts.push(`${graph.cycles.length} dependency loop${graph.cycles.length === 1 ? '' : 's'}.`);
  return parts.join(' ');
}
