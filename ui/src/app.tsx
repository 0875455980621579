/** The dashboard shell: sign-in gate, header with navigation, and the page of the current route. */
import { useEffect, useRef, useState } from 'preact/hooks';
import { clearToken, getToken, UNAUTHENTICATED_EVENT } from './api';
import { ClusterPage } from './cluster-page';
import { NewScaffoldPage } from './dry-run-page';
import { FleetPage } from './fleet-page';
import { useTitle } from './hooks';
import { LoginPage } from './login-page';
import { onLinkClick, paths, useRoute, type Route } from './router';
import { RunPage } from './run-page';
import { RunsPage } from './runs-page';
import { UpgradePage } from './upgrade-page';

export function App() {
  const [signedIn, setSignedIn] = useState(() => getToken() !== null);
  const [notice, setNotice] = useState<string | null>(null);
  const route = useRoute();

  useEffect(() => {
    const onRefused = () => {
      setSignedIn(false);
      setNotice('The service no longer accepts your token. Sign in again.');
    };
    window.addEventListener(UNAUTHENTICATED_EVENT, onRefused);
    return () => window.removeEventListener(UNAUTHENTICATED_EVENT, onRefused);
  }, []);

  if (!signedIn) {
    return (
      <LoginPage
        notice={notice}
        onLogin={() => {
          setNotice(null);
          setSignedIn(true);
        }}
      />
    );
  }

  const signOut = () => {
    clearToken();
    setNotice('Signed out.');
    setSignedIn(false);
  };
  return <Shell route={route} onSignOut={signOut} />;
}

function Shell({ route, onSignOut }: { route: Route; onSignOut: () => void }) {
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);
  const routeKey =
    route.name === 'run' || route.name === 'upgrade' ? `${route.name}:${route.id}` : route.name === 'cluster' ? `cluster:${route.cluster}` : route.name;

  // After a navigation, focus moves to the new page's heading, as a page load would reset it.
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    const heading = main.current?.querySelector<HTMLElement>('h1');
    (heading ?? main.current)?.focus();
    window.scrollTo(0, 0);
  }, [routeKey]);

  const section = route.name === 'new' ? 'new' : route.name === 'fleet' || route.name === 'cluster' || route.name === 'upgrade' ? 'fleet' : 'runs';
  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <a class="brand" href={paths.runs} onClick={onLinkClick}>
          gitops-scaffolder
        </a>
        <nav aria-label="Main">
          <ul>
            <li>
              <a href={paths.runs} onClick={onLinkClick} aria-current={section === 'runs' ? 'page' : undefined}>
                Runs
              </a>
            </li>
            <li>
              <a href={paths.fleet} onClick={onLinkClick} aria-current={section === 'fleet' ? 'page' : undefined}>
                Fleet
              </a>
            </li>
            <li>
              <a href={paths.newScaffold} onClick={onLinkClick} class="nav-primary" aria-current={section === 'new' ? 'page' : undefined}>
                New scaffold
              </a>
            </li>
          </ul>
        </nav>
        <button type="button" class="link-button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        <Page route={route} />
      </main>
    </>
  );
}

function Page({ route }: { route: Route }) {
  switch (route.name) {
    case 'runs':
      return <RunsPage />;
    case 'run':
      return <RunPage key={route.id} id={route.id} />;
    case 'new':
      return <NewScaffoldPage />;
    case 'fleet':
      return <FleetPage />;
    case 'cluster':
      return <ClusterPage key={route.cluster} name={route.cluster} />;
    case 'upgrade':
      return <UpgradePage key={route.id} id={route.id} />;
    case 'not-found':
      return <NotFound path={route.path} />;
  }
}

function NotFound({ path }: { path: string }) {
  useTitle('Not found');
  return (
    <>
      <h1 tabIndex={-1}>Not found</h1>
      <p>
        The dashboard has no page <code>{path}</code>.{' '}
        <a href={paths.runs} onClick={onLinkClick}>
          Back to the runs
        </a>
        .
      </p>
    </>
  );
}
