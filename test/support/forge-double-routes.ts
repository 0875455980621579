/**
 * The endpoints of the forge double, one table per forge, each answering with
 * the fields and status codes the real API documents for the cases delivery
 * meets (an existing request, a request not mergeable yet, a head that moved, a
 * branch already deleted).
 */
import type { DoublePull, ForgeContext, Reply } from './forge-double.js';

export interface RouteInput {
  readonly context: ForgeContext;
  readonly params: Record<string, string>;
  readonly query: URLSearchParams;
  readonly body: Record<string, unknown>;
}

export interface ForgeRoute {
  readonly method: string;
  readonly path: RegExp;
  handle(input: RouteInput): Promise<Reply>;
}

const REPO = '/repos/(?<owner>[^/]+)/(?<repo>[^/]+)';

function route(method: string, path: string, handle: (input: RouteInput) => Promise<Reply>): ForgeRoute {
  const wrapped = async (input: RouteInput): Promise<Reply> => {
    const { owner, repo, project } = input.params;
    const { options } = input.context;
    const known = project !== undefined ? decodeURIComponent(project) === `${options.owner}/${options.repo}` : owner === options.owner && repo === options.repo;
    return known ? handle(input) : { status: 404, body: { message: 'Not Found' } };
  };
  return { method, path: new RegExp(`^${path}$`), handle: wrapped };
}

function find(context: ForgeContext, number: string | undefined): DoublePull | undefined {
  return context.pulls.find((p) => p.number === Number(number));
}

async function newPull(
  context: ForgeContext,
  fields: { head: unknown; base: unknown; title: unknown; body: unknown; labels?: string[] },
): Promise<DoublePull | Reply> {
  const { head, base, title } = fields;
  if (typeof head !== 'string' || typeof base !== 'string' || typeof title !== 'string' || title === '')
    return { status: 422, body: { message: 'Validation Failed' } };
  if (!(await context.branchSha(head)) || !(await context.branchSha(base)))
    return { status: 422, body: { message: 'Validation Failed', errors: [{ field: 'head', code: 'invalid' }] } };
  if (context.pulls.some((p) => p.head === head && p.base === base && p.state === 'open')) {
    return {
      status: 422,
      body: { message: 'Validation Failed', errors: [{ message: `A pull request already exists for ${context.options.owner}:${head}.` }] },
    };
  }
  const pull: DoublePull = {
    number: context.pulls.length + 1,
    head,
    base,
    title,
    body: typeof fields.body === 'string' ? fields.body : '',
    labels: fields.labels ?? [],
    state: 'open',
    merged: false,
    checksPassed: context.options.checksPass ?? true,
  };
  context.pulls.push(pull);
  context.opened(pull);
  return pull;
}

// ---------------------------------------------------------------- GitHub (REST v3)

async function githubPull(context: ForgeContext, pull: DoublePull): Promise<Record<string, unknown>> {
  const headSha = (await context.branchSha(pull.head)) ?? '0'.repeat(40);
  const open = pull.state === 'open';
  return {
    number: pull.number,
    html_url: `${context.baseUrl}/${context.options.owner}/${context.options.repo}/pull/${pull.number}`,
    state: pull.state,
    title: pull.title,
    body: pull.body,
    labels: pull.labels.map((name, i) => ({ id: i + 1, name })),
    merged: pull.merged,
    merged_at: pull.merged ? new Date().toISOString() : null,
    merge_commit_sha: pull.mergeSha ?? null,
    mergeable: open ? true : null,
    mergeable_state: open ? (pull.checksPassed ? 'clean' : 'blocked') : 'unknown',
    head: { ref: pull.head, sha: headSha, label: `${context.options.owner}:${pull.head}` },
    base: { ref: pull.base, sha: (await context.branchSha(pull.base)) ?? '' },
  };
}

export const githubRoutes: readonly ForgeRoute[] = [
  route('GET', `${REPO}/pulls`, async ({ context, query }) => {
    const state = query.get('state') ?? 'open';
    const head = query.get('head');
    const base = query.get('base');
    const matching = context.pulls.filter(
      (p) => (state === 'all' || p.state === state) && (head === null || head === `${context.options.owner}:${p.head}`) && (base === null || base === p.base),
    );
    return { status: 200, body: await Promise.all(matching.map((p) => githubPull(context, p))) };
  }),
  route('POST', `${REPO}/pulls`, async ({ context, body }) => {
    const created = await newPull(context, { head: body.head, base: body.base, title: body.title, body: body.body });
    return 'status' in created ? created : { status: 201, body: await githubPull(context, created) };
  }),
  route('GET', `${REPO}/pulls/(?<number>\\d+)`, async ({ context, params }) => {
    const pull = find(context, params.number);
    return pull ? { status: 200, body: await githubPull(context, pull) } : { status: 404, body: { message: 'Not Found' } };
  }),
  route('PUT', `${REPO}/pulls/(?<number>\\d+)/merge`, async ({ context, params, body }) => {
    const pull = find(context, params.number);
    if (!pull) return { status: 404, body: { message: 'Not Found' } };
    if (pull.state !== 'open' || !pull.checksPassed) return { status: 405, body: { message: 'Pull Request is not mergeable' } };
    if (typeof body.sha === 'string' && body.sha !== (await context.branchSha(pull.head))) {
      return { status: 409, body: { message: 'Head branch was modified. Review and try the merge again.' } };
    }
    if (!(await context.mergePull(pull))) return { status: 405, body: { message: 'Pull Request is not mergeable' } };
    return { status: 200, body: { sha: pull.mergeSha, merged: true, message: 'Pull Request successfully merged' } };
  }),
  route('POST', `${REPO}/issues/(?<number>\\d+)/labels`, async ({ context, params, body }) => {
    const pull = find(context, params.number);
    if (!pull) return { status: 404, body: { message: 'Not Found' } };
    const labels = Array.isArray(body.labels) ? body.labels.map(String) : [];
    pull.labels = [...new Set([...pull.labels, ...labels])];
    return { status: 200, body: pull.labels.map((name, i) => ({ id: i + 1, name })) };
  }),
  // Octokit sends the ref with its slashes escaped (heads%2Fscaffold%2F…); GitHub accepts both.
  route('DELETE', `${REPO}/git/refs/(?<ref>.+)`, async ({ context, params }) => {
    const ref = decodeURIComponent(params.ref ?? '');
    const deleted = ref.startsWith('heads/') && (await context.deleteBranch(ref.slice('heads/'.length)));
    return deleted ? { status: 204 } : { status: 422, body: { message: 'Reference does not exist' } };
  }),
];

// ---------------------------------------------------------------- GitLab (v4)

const PROJECT = '/api/v4/projects/(?<project>[^/]+)';

async function gitlabMergeRequest(context: ForgeContext, pull: DoublePull): Promise<Record<string, unknown>> {
  const open = pull.state === 'open';
  return {
    iid: pull.number,
    id: 1000 + pull.number,
    web_url: `${context.baseUrl}/${context.options.owner}/${context.options.repo}/-/merge_requests/${pull.number}`,
    state: pull.merged ? 'merged' : open ? 'opened' : 'closed',
    title: pull.title,
    description: pull.body,
    labels: pull.labels,
    source_branch: pull.head,
    target_branch: pull.base,
    sha: (await context.branchSha(pull.head)) ?? null,
    merge_commit_sha: pull.mergeSha ?? null,
    has_conflicts: false,
    detailed_merge_status: open ? (pull.checksPassed ? 'mergeable' : 'ci_still_running') : 'not_open',
  };
}

export const gitlabRoutes: readonly ForgeRoute[] = [
  route('GET', `${PROJECT}/merge_requests`, async ({ context, query }) => {
    const state = query.get('state');
    const matching = context.pulls.filter(
      (p) =>
        (state === null || state === 'all' || (state === 'opened' ? p.state === 'open' : state === 'merged' ? p.merged : p.state === 'closed' && !p.merged)) &&
        (query.get('source_branch') === null || query.get('source_branch') === p.head) &&
        (query.get('target_branch') === null || query.get('target_branch') === p.base),
    );
    return { status: 200, body: await Promise.all(matching.map((p) => gitlabMergeRequest(context, p))) };
  }),
  route('POST', `${PROJECT}/merge_requests`, async ({ context, body }) => {
    const labels = typeof body.labels === 'string' ? body.labels.split(',').filter(Boolean) : Array.isArray(body.labels) ? body.labels.map(String) : [];
    const created = await newPull(context, { head: body.source_branch, base: body.target_branch, title: body.title, body: body.description, labels });
    if ('status' in created)
      return created.status === 422 ? { status: 409, body: { message: ['Another open merge request already exists for this source branch'] } } : created;
    return { status: 201, body: await gitlabMergeRequest(context, created) };
  }),
  route('GET', `${PROJECT}/merge_requests/(?<number>\\d+)`, async ({ context, params }) => {
    const pull = find(context, params.number);
    return pull ? { status: 200, body: await gitlabMergeRequest(context, pull) } : { status: 404, body: { message: '404 Not found' } };
  }),
  route('PUT', `${PROJECT}/merge_requests/(?<number>\\d+)/merge`, async ({ context, params, body }) => {
    const pull = find(context, params.number);
    if (!pull) return { status: 404, body: { message: '404 Not found' } };
    if (pull.state !== 'open' || !pull.checksPassed) return { status: 405, body: { message: '405 Method Not Allowed' } };
    if (typeof body.sha === 'string' && body.sha !== (await context.branchSha(pull.head)))
      return { status: 409, body: { message: 'SHA does not match HEAD of source branch' } };
    if (!(await context.mergePull(pull))) return { status: 422, body: { message: 'Branch cannot be merged' } };
    return { status: 200, body: await gitlabMergeRequest(context, pull) };
  }),
  route('DELETE', `${PROJECT}/repository/branches/(?<branch>.+)`, async ({ context, params }) => {
    const deleted = await context.deleteBranch(decodeURIComponent(params.branch ?? ''));
    return deleted ? { status: 204 } : { status: 404, body: { message: '404 Branch Not Found' } };
  }),
];

// ---------------------------------------------------------------- Gitea (v1)

const GITEA_LABELS = ['gitops-scaffolder', 'scaffold-pass:infrastructure', 'scaffold-pass:all'];

async function giteaPull(context: ForgeContext, pull: DoublePull): Promise<Record<string, unknown>> {
  return {
    number: pull.number,
    html_url: `${context.baseUrl}/${context.options.owner}/${context.options.repo}/pulls/${pull.number}`,
    state: pull.state,
    title: pull.title,
    body: pull.body,
    labels: pull.labels.map((name) => ({ id: GITEA_LABELS.indexOf(name) + 1, name })),
    merged: pull.merged,
    merge_commit_sha: pull.mergeSha ?? null,
    mergeable: pull.state === 'open' && pull.checksPassed,
    head: { ref: pull.head, sha: (await context.branchSha(pull.head)) ?? '' },
    base: { ref: pull.base, sha: (await context.branchSha(pull.base)) ?? '' },
  };
}

export const giteaRoutes: readonly ForgeRoute[] = [
  route('GET', `/api/v1${REPO}/labels`, async () => ({ status: 200, body: GITEA_LABELS.map((name, i) => ({ id: i + 1, name })) })),
  route('GET', `/api/v1${REPO}/pulls`, async ({ context, query }) => {
    const state = query.get('state') ?? 'open';
    const page = Number(query.get('page') ?? '1');
    const limit = Number(query.get('limit') ?? '30');
    const matching = context.pulls.filter((p) => state === 'all' || p.state === state).slice((page - 1) * limit, page * limit);
    return { status: 200, body: await Promise.all(matching.map((p) => giteaPull(context, p))) };
  }),
  route('POST', `/api/v1${REPO}/pulls`, async ({ context, body }) => {
    const ids = Array.isArray(body.labels) ? body.labels.map(Number) : [];
    const labels = ids.map((id) => GITEA_LABELS[id - 1]).filter((name): name is string => name !== undefined);
    const created = await newPull(context, { head: body.head, base: body.base, title: body.title, body: body.body, labels });
    if ('status' in created) return created.status === 422 ? { status: 409, body: { message: 'pull request already exists for these targets' } } : created;
    return { status: 201, body: await giteaPull(context, created) };
  }),
  route('GET', `/api/v1${REPO}/pulls/(?<number>\\d+)`, async ({ context, params }) => {
    const pull = find(context, params.number);
    return pull ? { status: 200, body: await giteaPull(context, pull) } : { status: 404, body: { message: 'not found' } };
  }),
  route('POST', `/api/v1${REPO}/pulls/(?<number>\\d+)/merge`, async ({ context, params, body }) => {
    const pull = find(context, params.number);
    if (!pull) return { status: 404, body: { message: 'not found' } };
    if (pull.state !== 'open' || !pull.checksPassed) return { status: 405, body: { message: 'Please try again later' } };
    if (typeof body.head_commit_id === 'string' && body.head_commit_id !== (await context.branchSha(pull.head)))
      return { status: 409, body: { message: 'head out of date' } };
    return (await context.mergePull(pull)) ? { status: 200 } : { status: 409, body: { message: 'merge conflict' } };
  }),
  route('DELETE', `/api/v1${REPO}/branches/(?<branch>.+)`, async ({ context, params }) => {
    const deleted = await context.deleteBranch(decodeURIComponent(params.branch ?? ''));
    return deleted ? { status: 204 } : { status: 404, body: { message: 'branch not found' } };
  }),
];
