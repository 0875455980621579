/**
 * Client routes under /ui/ with the History API (the service answers every
 * /ui/ path without a file extension with index.html):
 * `/ui/` runs, `/ui/runs/<id>` one run, `/ui/new` the new-scaffold form (preview, then start;
 * `/ui/dry-run`, its old address, shows it too),
 * `/ui/fleet` the clusters, `/ui/fleet/<name>` one cluster, `/ui/upgrades/<id>` one upgrade rollout.
 */
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { readonly name: 'runs' }
  | { readonly name: 'run'; readonly id: string }
  | { readonly name: 'new' }
  | { readonly name: 'fleet' }
  | { readonly name: 'cluster'; readonly cluster: string }
  | { readonly name: 'upgrade'; readonly id: string }
  | { readonly name: 'not-found'; readonly path: string };

const NAVIGATE_EVENT = 'gitops-scaffolder:navigate';

export const paths = {
  runs: '/ui/',
  run: (id: string) => `/ui/runs/${encodeURIComponent(id)}`,
  newScaffold: '/ui/new',
  fleet: '/ui/fleet',
  cluster: (name: string) => `/ui/fleet/${encodeURIComponent(name)}`,
  upgrade: (id: string) => `/ui/upgrades/${encodeURIComponent(id)}`,
};

export function routeOf(pathname: string): Route {
  const path = pathname.replace(/\/+$/, '') || '/';
  if (path === '/ui' || path === '/') return { name: 'runs' };
  if (path === '/ui/new' || path === '/ui/dry-run') return { name: 'new' };
  if (path === '/ui/fleet') return { name: 'fleet' };
  const cluster = /^\/ui\/fleet\/([a-z0-9-]{1,63})$/.exec(path);
  if (cluster?.[1] !== undefined) return { name: 'cluster', cluster: cluster[1] };
  const upgrade = /^\/ui\/upgrades\/([a-z0-9-]{1,64})$/.exec(path);
  if (upgrade?.[1] !== undefined) return { name: 'upgrade', id: upgrade[1] };
  const run = /^\/ui\/runs\/([a-z0-9-]{1,64})$/.exec(path);
  if (run?.[1] !== undefined) return { name: 'run', id: run[1] };
  return { name: 'not-found', path };
}

export function navigate(href: string): void {
  if (href === location.pathname) return;
  history.pushState(null, '', href);
  window.dispatchEvent(new Event(NAVIGATE_EVENT));
}

/** The current route; re-renders on navigation and on the browser's back and forward. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => routeOf(location.pathname));
  useEffect(() => {
    const update = () => setRoute(routeOf(location.pathname));
    window.addEventListener('popstate', update);
    window.addEventListener(NAVIGATE_EVENT, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(NAVIGATE_EVENT, update);
    };
  }, []);
  return route;
}

/**
 * One query parameter of the current address (`?status=failed`), kept in the
 * URL so that a reload, a shared link and back/forward show the same view.
 * Setting it pushes a history entry (`fallback` removes the parameter);
 * a value `allowed` rejects reads as `fallback`.
 */
export function useSearchParam<T extends string>(name: string, allowed: readonly T[], fallback: T): [T, (value: T) => void] {
  const read = (): T => {
    const value = new URLSearchParams(location.search).get(name);
    return value !== null && (allowed as readonly string[]).includes(value) ? (value as T) : fallback;
  };
  const [value, setValue] = useState<T>(read);
  useEffect(() => {
    const update = () => setValue(read());
    window.addEventListener('popstate', update);
    window.addEventListener(NAVIGATE_EVENT, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(NAVIGATE_EVENT, update);
    };
  }, [name]);
  const set = (next: T) => {
    const params = new URLSearchParams(location.search);
    if (next === fallback) params.delete(name);
    else params.set(name, next);
    const search = params.toString();
    history.pushState(null, '', `${location.pathname}${search === '' ? '' : `?${search}`}${location.hash}`);
    setValue(next);
  };
  return [value, set];
}

/** Click handler for in-app links: plain left clicks navigate in place; modified clicks keep the browser's behaviour. */
export function onLinkClick(event: MouseEvent): void {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const anchor = (event.currentTarget as HTMLAnchorElement | null) ?? null;
  if (anchor === null || anchor.target === '_blank') return;
  const url = new URL(anchor.href);
  if (url.origin !== location.origin || !url.pathname.startsWith('/ui/')) return;
  event.preventDefault();
  navigate(url.pathname);
}
