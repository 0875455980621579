/**
 * Sign-in with a bearer token: one of the service's API_TOKENS in embedded
 * mode, or a ServiceAccount token it accepts. The token is checked against the
 * API, then kept in sessionStorage for this tab; it never enters a URL.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, setToken, verifyToken } from './api';
import { useTitle } from './hooks';

export function LoginPage({ onLogin, notice }: { onLogin: () => void; notice: string | null }) {
  useTitle('Sign in');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);

  const submit = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const token = String(new FormData(form).get('token') ?? '').trim();
    if (token === '') {
      setError('Enter a token.');
      input.current?.focus();
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await verifyToken(token);
      setToken(token);
      form.reset();
      onLogin();
    } catch (caught) {
      setError(
        caught instanceof ApiError && caught.status === 401
          ? 'The service refused this token.'
          : `Could not reach the service: ${caught instanceof Error ? caught.message : String(caught)}`,
      );
      setBusy(false);
      input.current?.select();
    }
  };

  return (
    <main id="main" class="login" tabIndex={-1}>
      <h1>gitops-scaffolder</h1>
      <p class="lede">Scaffold runs, their logs and each cluster's Flux graph.</p>
      {notice !== null && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <form class="card login-form" onSubmit={submit} noValidate>
        <h2>Sign in</h2>
        <div class="field">
          <label for="token">API token</label>
          <input
            ref={input}
            id="token"
            name="token"
            type="password"
            autocomplete="off"
            spellcheck={false}
            required
            onInput={() => setError(null)}
            aria-describedby="token-help"
            aria-invalid={error !== null ? 'true' : undefined}
            aria-errormessage={error !== null ? 'token-error' : undefined}
          />
          <p id="token-help" class="hint">
            A bearer token the service accepts: in embedded mode one of API_TOKENS or, without them, the generated one in DATA_DIR/api-token. It is kept in this
            browser tab only and sent in the Authorization header.
          </p>
          {error !== null && (
            <p id="token-error" class="field-error" role="alert">
              {error}
            </p>
          )}
        </div>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
