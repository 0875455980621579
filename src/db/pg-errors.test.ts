import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { UnavailableError, ValidationError } from '../errors.js';
import { translatePgError } from './pg-errors.js';

const pgError = (code: string, message = 'driver text mentioning postgres://scaffolder:hunter2@db/runs') => Object.assign(new Error(message), { code });

describe('translatePgError', () => {
  it('reports what trying again may cure as unavailable: a statement timeout, a shutdown, a lost connection', () => {
    for (const code of ['57014', '57P01', '53300', '08006', 'ECONNREFUSED', 'ECONNRESET']) {
      const translated = translatePgError(pgError(code));
      assert.ok(translated instanceof UnavailableError, code);
      assert.equal(translated.message, `database unavailable (${code})`, 'the SQLSTATE or errno only, never the driver text');
    }
  });

  it('reports a value the database refuses as a bad request, and leaves other errors as they are', () => {
    for (const code of ['23514', '22P02', '22003']) assert.ok(translatePgError(pgError(code)) instanceof ValidationError, code);
    const unique = pgError('23505');
    assert.equal(translatePgError(unique), unique);
  });
});
