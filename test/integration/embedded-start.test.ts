/**
 * Embedded mode's start-up: with no API_TOKENS, `serve` generates a token at the
 * first start, prints it once with the dashboard's URL, and accepts it; a
 * restart prints the URL and where the token is, never the token again.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startService } from '../../src/main.js';
import { createPino } from '../../src/pino-logger.js';
import { loadServiceConfig } from '../../src/service/service-config.js';

describe('embedded mode start-up', () => {
  let dir: string | undefined;
  after(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('prints the dashboard URL and a generated token once; the token works', async () => {
    dir = await mkdtemp(join(tmpdir(), 'embedded-start-'));
    const config = loadServiceConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: join(dir, 'data'), EXECUTOR: 'local', LOG_LEVEL: 'silent' });
    assert.equal(config.authMode, 'static');
    const start = async (): Promise<{ printed: string; address: string; close: () => Promise<void> }> => {
      let printed = '';
      const service = await startService(config, {
        logger: createPino({ level: 'silent', pretty: false }),
        notice: (text) => void (printed += text),
        noticeOnTerminal: true,
      });
      return { printed, address: service.address, close: () => service.close() };
    };

    const first = await start();
    try {
      assert.ok(first.printed.includes(`dashboard at ${first.address}/ui/`), first.printed);
      const token = /API token \(shown once; kept in [^)]+\): (\S+)/.exec(first.printed)?.[1];
      assert.ok(token, first.printed);
      const listed = await fetch(`${first.address}/api/v1/scaffolds`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(listed.status, 200);
      const refused = await fetch(`${first.address}/api/v1/scaffolds`, { headers: { authorization: 'Bearer not-the-generated-token' } });
      assert.equal(refused.status, 401);
      await first.close();

      const second = await start();
      try {
        assert.ok(!second.printed.includes(token), 'the token is printed only when it is generated');
        assert.match(second.printed, /API token: sign in with the one in .*api-token/);
        const again = await fetch(`${second.address}/api/v1/scaffolds`, { headers: { authorization: `Bearer ${token}` } });
        assert.equal(again.status, 200, 'the same token after a restart');
      } finally {
        await second.close();
      }
    } finally {
      await first.close();
    }
  });
});
