/**
 * The behaviour every `ForgeClient` must show, as a node:test suite: what
 * pull-request delivery relies on, the same on every forge. A forge's test
 * calls {@link runForgeClientContract} with a way to open a client in front of
 * a fresh repository on that forge (the loopback forge double, over a real
 * bare repository), and ways to act on the forge as a person would.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AuthenticationError, NotFoundError } from '../errors.js';
import type { ForgeName } from '../model/forges.js';
import type { ForgeClient } from './forge-client.js';

/** A client under test, the repository it works on, and the forge's side of it. */
export interface ForgeFixture {
  readonly client: ForgeClient;
  /** A client for the same repository whose token the forge does not know. */
  readonly strangerClient: ForgeClient;
  /** The branch requests go into; it exists, with at least one commit. */
  readonly base: string;
  /** Creates `branch` one new commit ahead of `from` (or moves it there): its commit. */
  commitOnBranch(branch: string, from: string): Promise<string>;
  /** The commit a branch points at on the forge, or undefined when there is none. */
  branchSha(branch: string): Promise<string | undefined>;
  /** Whether a request's required checks have passed (as a CI would report). */
  setChecksPassed(number: number, passed: boolean): void;
  /** Closes a request without merging, as a reviewer would. */
  close(number: number): void;
  /** The labels the forge shows on a request. */
  labelsOf(number: number): readonly string[];
  /** Stops whatever `open` started and removes what it created. */
  cleanup(): Promise<void>;
}

/**
 * Registers the ForgeClient contract suite for `forge`.
 *
 * @param open - returns a new fixture; called once, before the suite's tests, which keep apart by branch name
 */
export function runForgeClientContract(forge: ForgeName, open: () => Promise<ForgeFixture>): void {
  describe(`ForgeClient contract: ${forge}`, () => {
    let opened: ForgeFixture | undefined;
    const fixture = (): ForgeFixture => {
      if (!opened) throw new Error('fixture not open');
      return opened;
    };
    let branches = 0;
    /** A fresh branch one commit ahead of the base, and an open request from it. */
    const openedRequest = async (labels: readonly string[] = []) => {
      const { client, base } = fixture();
      const head = `contract/${forge}-${++branches}`;
      const headSha = await fixture().commitOnBranch(head, base);
      const request = await client.open({ head, base, title: `Contract ${branches}`, body: 'Opened by the ForgeClient contract.', labels });
      return { head, headSha, request };
    };

    before(async () => {
      opened = await open();
    });
    after(async () => {
      await opened?.cleanup();
    });

    it('names its forge', () => {
      assert.equal(fixture().client.forge, forge);
    });

    it('finds no open request for a branch that has none', async () => {
      const { client, base } = fixture();
      const head = `contract/${forge}-${++branches}`;
      await fixture().commitOnBranch(head, base);
      assert.equal(await client.findOpen(head, base), undefined);
    });

    it('opens a request that is then found open, read back the same, and carries its labels', async () => {
      const { client, base } = fixture();
      const { head, headSha, request } = await openedRequest(['gitops-scaffolder']);
      assert.equal(request.state, 'open');
      assert.equal(request.headSha, headSha);
      assert.equal(request.mergeSha, undefined);
      assert.match(request.url, /^https?:\/\//);
      assert.deepEqual(await client.findOpen(head, base), request);
      assert.deepEqual(await client.get(request.number), request);
      assert.deepEqual(fixture().labelsOf(request.number), ['gitops-scaffolder']);
      // The same head into another base is another request.
      assert.equal(await client.findOpen(head, `${base}-elsewhere`), undefined);
    });

    it('is not mergeable while checks are pending, and merge declines without touching the base', async () => {
      const { client, base } = fixture();
      const { headSha, request } = await openedRequest();
      fixture().setChecksPassed(request.number, false);
      const baseBefore = await fixture().branchSha(base);
      assert.equal((await client.get(request.number)).mergeable, false);
      assert.equal(await client.merge(request.number, headSha), false);
      assert.equal(await fixture().branchSha(base), baseBefore);
      assert.equal((await client.get(request.number)).state, 'open');
      fixture().setChecksPassed(request.number, true);
      assert.equal((await client.get(request.number)).mergeable, true);
    });

    it('declines to merge once the head moved past the commit it was asked to merge', async () => {
      const { client, base } = fixture();
      const { head, headSha, request } = await openedRequest();
      const moved = await fixture().commitOnBranch(head, head);
      const baseBefore = await fixture().branchSha(base);
      assert.equal(await client.merge(request.number, headSha), false);
      assert.equal(await fixture().branchSha(base), baseBefore);
      const current = await client.get(request.number);
      assert.equal(current.state, 'open');
      assert.equal(current.headSha, moved);
    });

    it('merges the head it was given: the request reads merged, with the merge commit the base now points at', async () => {
      const { client, base } = fixture();
      const { head, headSha, request } = await openedRequest();
      assert.equal(await client.merge(request.number, headSha), true);
      const merged = await client.get(request.number);
      assert.equal(merged.state, 'merged');
      assert.equal(merged.mergeSha, await fixture().branchSha(base));
      assert.notEqual(merged.mergeSha, undefined);
      assert.equal(await client.findOpen(head, base), undefined);
    });

    it('reads a request closed without merging as closed, and no longer finds it open', async () => {
      const { client, base } = fixture();
      const { head, request } = await openedRequest();
      fixture().close(request.number);
      assert.equal((await client.get(request.number)).state, 'closed');
      assert.equal(await client.findOpen(head, base), undefined);
    });

    it('deletes a branch, and a branch already gone is no error', async () => {
      const { client, base } = fixture();
      const head = `contract/${forge}-${++branches}`;
      await fixture().commitOnBranch(head, base);
      await client.deleteBranch(head);
      assert.equal(await fixture().branchSha(head), undefined);
      await client.deleteBranch(head);
      assert.notEqual(await fixture().branchSha(base), undefined);
    });

    it('answers a request that does not exist with NotFoundError', async () => {
      await assert.rejects(fixture().client.get(9999), NotFoundError);
    });

    it('answers a token the forge does not know with AuthenticationError, never echoing the token', async () => {
      const { strangerClient, base } = fixture();
      await assert.rejects(strangerClient.findOpen('contract/none', base), (error: unknown) => {
        assert.ok(error instanceof AuthenticationError, String(error));
        assert.doesNotMatch(error.message, /stranger-token/);
        return true;
      });
    });
  });
}
