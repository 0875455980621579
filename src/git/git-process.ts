/**
 * The one place that spawns `git`. Every invocation gets a clean, fixed
 * environment so the machine's and the user's configuration cannot change what
 * git does (credential helpers, url rewrites, hooks paths, signing, pagers), and
 * every failure becomes an error from the shared vocabulary with git's output
 * redacted, because those messages reach logs, API responses and result files.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { existsSync } from 'node:fs';
import { childLauncher } from '../process/spawn-helper.js';
import type { ChildStartError } from '../process/child-launcher.js';
import { devNull } from 'node:os';
import {
  type AppError,
  AuthenticationError,
  ForbiddenError,
  MissingDependencyError,
  NotFoundError,
  TimeoutError,
  UnavailableError,
  ValidationError,
} from '../errors.js';

/** How to run one git command. */
export interface RunGitOptions {
  /** Working directory of the git process. */
  readonly cwd: string;
  /** Extra environment for this invocation (credentials, identity); wins over the fixed environment. */
  readonly env?: Readonly<Record<string, string>>;
  /** Aborting kills git (and the helpers it started) and rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** Written to git's stdin, which is otherwise closed. */
  readonly input?: string;
  /** Kills git after this long and rejects with a TimeoutError. @default no limit */
  readonly timeoutMs?: number;
  /** Literal strings to scrub from anything this call reports, on top of the generic patterns. */
  readonly secrets?: readonly string[];
  /** Exit codes that are answers rather than failures (e.g. 1 from `git diff --quiet`). @default [0] */
  readonly okExitCodes?: readonly number[];
  /**
   * `own`: git leads a process group of its own, so an abort reaches the helpers
   * it starts (git-remote-https, ssh, upload-pack). `caller`: git stays in the
   * caller's group, so whoever kills the caller's group (the executor, after a
   * runner died even by SIGKILL) kills a `git push` in flight with it.
   * @default 'own'
   */
  readonly processGroup?: 'own' | 'caller';
}

/** What a git command printed and how it ended. */
export interface GitResult {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number;
}

/**
 * Variables passed through from the parent: finding programs, temp space, and
 * the network settings an operator legitimately configures for the whole pod
 * (proxies, extra CA bundles). Everything else, notably GIT_* and SSH_AUTH_SOCK,
 * is dropped.
 */
const INHERITED = [
  'PATH',
  'TMPDIR',
  'http_proxy',
  'https_proxy',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'no_proxy',
  'NO_PROXY',
  'all_proxy',
  'ALL_PROXY',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'GIT_SSL_CAINFO',
] as const;

function baseEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return {
    ...env,
    // No prompts: a missing or wrong credential must fail, not hang the run.
    GIT_TERMINAL_PROMPT: '0',
    GIT_SSH_COMMAND: 'ssh -o BatchMode=yes',
    // Neither /etc/gitconfig nor ~/.gitconfig nor $XDG_CONFIG_HOME/git/*: /dev/null
    // as HOME cannot be created by anyone, and git treats ENOTDIR below it as "missing".
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: devNull,
    HOME: devNull,
    XDG_CONFIG_HOME: devNull,
    // Messages are classified by their English text.
    LC_ALL: 'C',
    LANG: 'C',
    // No ext:: or fd:: transports, whatever a repository's config or a URL says.
    GIT_ALLOW_PROTOCOL: 'file:git:http:https:ssh',
  };
}

const REDACTIONS: readonly (readonly [RegExp, string])[] = [
  // user:password@ (or token@) in any URL.
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@]+@/gi, '$1***@'],
  // Authorization headers as curl's or git's trace would print them.
  [/\b((?:proxy-)?authorization:\s*)[^\r\n]*/gi, '$1***'],
  [/\b(basic|bearer)\s+[A-Za-z0-9+/=._~-]{8,}/gi, '$1 ***'],
  // Well-known token shapes: GitHub, GitLab.
  [/\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,})/g, '***'],
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g, '***'],
];

/**
 * Scrubs credentials from text that is about to leave the process: URL user
 * info, Authorization headers, well-known token shapes, private keys, and every
 * literal in `secrets`, however short (a one-letter password garbles the
 * message; safety wins over readability).
 */
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let out = text;
  // Longest first, so a secret that contains another is removed whole.
  for (const secret of [...secrets].filter((s) => s.length > 0).sort((a, b) => b.length - a.length)) {
    out = out.split(secret).join('***');
  }
  for (const [pattern, replacement] of REDACTIONS) out = out.replace(pattern, replacement);
  return out;
}

const AUTH_FAILURE =
  /Authentication failed|could not read (?:Username|Password)|terminal prompts disabled|HTTP Basic: Access denied|returned error: 401|Permission denied \(|Host key verification failed|Invalid username or password/i;
const FORBIDDEN = /returned error: 403|access denied|not authorized|insufficient (?:scope|permission)/i;
const NOT_FOUND =
  /Repository not found|repository '[^']*' not found|does not appear to be a git repository|returned error: 404|No such (?:repository|file or directory)|repository .* does not exist|not found: did you run git update-server-info|repository not exported/i;
const UNREACHABLE =
  /Could not resolve (?:host|proxy)|Connection refused|Connection timed out|Connection reset|Failed to connect|unable to connect|Network is unreachable|No route to host|remote end hung up|early EOF|Could not read from remote repository|unable to access|Operation timed out|SSL|TLS|returned error: 5\d\d|Broken pipe/i;
const NON_BARE_TARGET = /refusing to update checked out branch|branch is currently checked out/;
const BAD_INPUT =
  /pathspec '.*' did not match|outside of your sparse-checkout|is not a valid (?:branch|ref|object)|not a valid branch name|invalid (?:reference|branch|refspec)|bad revision|unknown revision|ambiguous argument/i;

/** Keeps the lines that say what went wrong; drops git's advice and progress chatter. */
function summarize(stderr: string): string {
  const lines = stderr
    .split(/\r?\n|\r/)
    .map((line) => line.trimEnd())
    .filter((line) => line.length > 0 && !line.startsWith('hint:'));
  const text = lines.join('\n');
  return text.length > 2000 ? `…${text.slice(-2000)}` : text;
}

/**
 * A connection that broke or was refused: a busy or restarting server, a
 * network blip. Asking again may well succeed. Not a name that does not
 * resolve or a certificate that does not verify: those stay wrong.
 */
const TRANSIENT =
  /Connection refused|Connection timed out|Connection reset|remote end hung up|early EOF|Could not read from remote repository|returned error: 5\d\d|Broken pipe|Operation timed out/i;

/**
 * Whether a failed network command failed for a reason that asking again may
 * cure: a failure {@link toGitError} calls unavailable (not a refused
 * credential, a missing repository or a bad target, which it tells first)
 * whose connection broke ({@link TRANSIENT}).
 */
export function isTransientNetworkFailure(result: GitResult): boolean {
  return result.exitCode !== 0 && TRANSIENT.test(result.stderr) && toGitError([], result) instanceof UnavailableError;
}

/** The subcommand, for messages: the first argument that is not a global option. */
export function subcommand(args: readonly string[]): string {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '-c' || arg === '-C') {
      i++;
      continue;
    }
    if (!arg.startsWith('-')) return arg;
  }
  return 'command';
}

/**
 * Turns a failed git command into the error the rest of the product
 * understands. The message is `git <subcommand> failed (exit N): <stderr>`,
 * redacted; only the subcommand is named, never the arguments.
 *
 * @returns AuthenticationError / ForbiddenError when the remote refused the
 *   credentials, NotFoundError when the repository does not exist, ValidationError
 *   for a bad pathspec, ref or usage, UnavailableError otherwise (the remote
 *   could not be reached, or git failed locally)
 */
export function toGitError(args: readonly string[], result: GitResult, secrets: readonly string[] = []): AppError {
  const detail = redactSecrets(summarize(result.stderr), secrets);
  const message = `git ${subcommand(args)} failed (exit ${result.exitCode})${detail ? `: ${detail}` : ''}`;
  const text = result.stderr;
  if (AUTH_FAILURE.test(text)) return new AuthenticationError(message);
  // A push into a working copy's checked-out branch: the target is wrong, not down.
  if (NON_BARE_TARGET.test(text))
    return new ValidationError(`the push target is not a bare repository (its branch is checked out); push to a bare repository. ${message}`);
  // git daemon says "access denied or repository not exported" for a missing repository.
  if (NOT_FOUND.test(text)) return new NotFoundError(message);
  if (FORBIDDEN.test(text)) return new ForbiddenError(message);
  if (UNREACHABLE.test(text)) return new UnavailableError(message);
  // 129 is git's usage error: an option or argument it does not accept.
  if (result.exitCode === 129 || BAD_INPUT.test(text)) return new ValidationError(message);
  return new UnavailableError(message);
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted', 'AbortError');
}

/**
 * Runs `git <args>` without a shell, in a clean environment (see the module
 * comment), and collects its output.
 *
 * Credentials must arrive through `options.env`, never `args`: arguments are
 * visible to every user of the machine in the process list.
 *
 * @throws the error {@link toGitError} gives when git exits with a code not in `okExitCodes`
 * @throws UnavailableError when git cannot be started
 * @throws TimeoutError when `timeoutMs` passes first
 * @throws the signal's reason when `signal` aborts
 */
export function runGit(args: readonly string[], options: RunGitOptions): Promise<GitResult> {
  const { signal, timeoutMs, secrets = [], okExitCodes = [0] } = options;
  const ownGroup = options.processGroup !== 'caller';
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise<GitResult>((resolve, reject) => {
    // Its own process group (ownGroup), so a kill also reaches git-remote-https, ssh and
    // upload-pack, which would otherwise keep the connection open. In the caller's group,
    // git's helpers see their pipes close and exit.
    const child = childLauncher().start({
      command: 'git',
      args,
      cwd: options.cwd,
      env: { ...baseEnvironment(), ...options.env },
      input: options.input ?? '',
      ownGroup,
    });

    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (action: () => void) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      action();
    };
    const onAbort = () => {
      child.kill();
      finish(() => reject(abortReason(signal as AbortSignal)));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    if (timeoutMs !== undefined) {
      timer = setTimeout(() => {
        child.kill();
        finish(() => reject(new TimeoutError(`git ${subcommand(args)} did not finish within ${timeoutMs} ms`)));
      }, timeoutMs);
    }

    child.outcome.then(
      ({ stdout, stderr, code }) =>
        finish(() => {
          // A null code (a signal ended it) is never one of the expected codes.
          const result: GitResult = { stdout, stderr, exitCode: code ?? -1 };
          if (okExitCodes.includes(result.exitCode)) resolve(result);
          else reject(toGitError(args, result, secrets));
        }),
      (error: ChildStartError) => {
        // spawn reports a missing working directory exactly like a missing binary.
        const cause =
          error.code !== 'ENOENT'
            ? `git could not be started: ${error.code ?? error.message}`
            : existsSync(options.cwd)
              ? 'git is not installed (not found on PATH)'
              : 'the working directory of git does not exist';
        // Only a refused start is worth retrying; no retry installs git or creates the directory.
        finish(() => reject(error.code === 'ENOENT' ? new MissingDependencyError(cause) : new UnavailableError(cause)));
      },
    );
  });
}

/**
 * A long-running git (`cat-file --batch`) whose pipes the caller speaks over,
 * with the same fixed environment as {@link runGit}. The caller ends it.
 */
export function spawnGitProcess(args: readonly string[], cwd: string): ChildProcessByStdio<Writable, Readable, null> {
  return spawn('git', [...args], { cwd, env: baseEnvironment(), stdio: ['pipe', 'pipe', 'ignore'], windowsHide: true });
}
