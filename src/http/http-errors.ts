/**
 * The one place where thrown values become HTTP statuses and JSON error bodies,
 * and where zod's failures become our field-naming ValidationError.
 */
import type { FastifyError, FastifySchemaCompiler } from 'fastify';
import type { z } from 'zod';
import { AppError, ValidationError, type FieldIssue } from '../errors.js';
import { fieldIssuesOf } from '../model/cluster-spec.js';

/**
 * Validates a request part with its zod schema. Failures become our
 * ValidationError with one field per issue (`cluster.name`, `repository.url`),
 * so the error handler renders them like any other invalid input.
 */
export const zodValidatorCompiler: FastifySchemaCompiler<z.ZodType> = ({ schema, httpPart }) => {
  const part = httpPart === 'querystring' ? 'query' : (httpPart ?? 'body');
  return (data: unknown) => {
    // reportInput only lets us tell "missing" from "wrong type" below; the input never reaches a message.
    const result = schema.safeParse(data, { error: friendlyMessage, reportInput: true });
    if (result.success) return { value: result.data };
    for (const issue of result.error.issues as { code: string; path: PropertyKey[]; message: string; input?: unknown }[]) {
      const absent = issue.input === undefined || (issue.path.length === 0 && issue.input === null);
      if (issue.code === 'invalid_type' && absent) issue.message = issue.path.length === 0 ? 'a JSON object is required' : 'is required';
      delete issue.input;
    }
    const issues: FieldIssue[] = fieldIssuesOf(result.error).map((issue) => ({ field: issue.field === '' ? part : issue.field, message: issue.message }));
    return { error: new ValidationError(issues) };
  };
};

/** zod's default messages, phrased for API callers; never quoting the input. */
function friendlyMessage(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.code === 'invalid_type') {
    return `must be ${issue.expected === 'object' ? 'an object' : issue.expected === 'array' ? 'an array' : `a ${issue.expected}`}`;
  }
  return undefined;
}

export interface ErrorBody {
  readonly error: { readonly code: string; readonly message: string; readonly fields?: readonly FieldIssue[] };
}

const STATUS_OF_CODE: Readonly<Record<string, number>> = {
  invalid_input: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  unavailable: 503,
};

/** The single mapping from a thrown value to an HTTP status and JSON body. */
export function errorResponseOf(error: unknown, bodyLimit: number): { status: number; body: ErrorBody } {
  if (error instanceof ValidationError) {
    return {
      status: 400,
      body: { error: { code: 'invalid_input', message: error.message, fields: error.issues.map((i) => ({ field: i.field, message: i.message })) } },
    };
  }
  if (error instanceof AppError) {
    const status = STATUS_OF_CODE[error.code];
    if (status !== undefined) return { status, body: { error: { code: error.code, message: error.message } } };
    return { status: 500, body: { error: { code: 'internal', message: 'internal error' } } };
  }
  const fastifyError = error as Partial<FastifyError>;
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, body: { error: { code: 'payload_too_large', message: `the request body exceeds ${bodyLimit} bytes` } } };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, body: { error: { code: 'unsupported_media_type', message: 'only application/json request bodies are accepted' } } };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return {
        status: 400,
        body: { error: { code: 'invalid_input', message: 'the request body is empty', fields: [{ field: 'body', message: 'is required' }] } },
      };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return {
        status: 400,
        body: { error: { code: 'invalid_input', message: 'the request body is not valid JSON', fields: [{ field: 'body', message: 'is not valid JSON' }] } },
      };
    default:
      break;
  }
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // JSON.parse's SyntaxError (and secure-json-parse's prototype-poisoning
    // error) quote part of the body: say what is wrong without it.
    const message = error instanceof SyntaxError || status === 400 ? 'the request body is not valid JSON' : 'the request was rejected';
    return { status, body: { error: { code: status === 400 ? 'invalid_input' : 'bad_request', message } } };
  }
  return { status: 500, body: { error: { code: 'internal', message: 'internal error' } } };
}

/** What an unexpected error looks like in a log line: type, message, code and stack (logs, never responses). */
export function describeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: String(error) };
  return { type: error.name, message: error.message, code: (error as { code?: unknown }).code, stack: error.stack };
}
