/**
 * What a run produced, beyond its record: its log (plain text or NDJSON,
 * optionally followed until the run is final) and its cluster's Flux graph.
 */
import { Readable } from 'node:stream';
import { NotFoundError } from '../../errors.js';
import type { LogLine } from '../../service/run-store.js';
import { API, type RouteContext } from '../route-context.js';
import { z } from 'zod';
import { errorResponsesOf, graphQuerySchema, idParamsSchema, logsQuerySchema } from '../wire-schemas.js';

/** Registers the log and graph routes. */
export function registerRunOutputRoutes(context: RouteContext): void {
  const { app, service, graphSource, readableRepository, signalOf } = context;

  app.get(
    `${API}/:id/graph`,
    {
      schema: {
        summary: "The Flux dependency graph of a run's cluster",
        description:
          "Drawn from the run's repository at its last commit, like `generate-gitops-env graph`: `?format=svg` (default, image/svg+xml) or `?format=json`. 404 while the run has no gitops_path, or when this service cannot draw graphs.",
        tags: ['scaffolds'],
        params: idParamsSchema,
        querystring: graphQuerySchema,
        response: {
          200: {
            description: 'The graph: an SVG picture (`?format=svg`), or its nodes and edges as data (`?format=json`)',
            content: {
              'image/svg+xml': { schema: z.string().describe('An SVG document') },
              'application/json': { schema: z.record(z.string(), z.unknown()).describe('The graph as `generate-gitops-env graph -o json` prints it') },
            },
          },
          ...errorResponsesOf(400, 404),
        },
      },
    },
    async (request, reply) => {
      const run = await service.get(request.params.id);
      if (graphSource === undefined) throw new NotFoundError('this service does not draw cluster graphs (no graph source is configured)');
      const format = request.query.format ?? 'svg';
      // Drawing clones in the service: only from a repository it is configured to read.
      await readableRepository({ repository_url: run.repositoryUrl, branch: run.branch });
      const drawing = await graphSource.graph(run, format);
      void reply.header('cache-control', 'private, no-cache').header('x-content-type-options', 'nosniff');
      // An SVG opened on its own must not run anything: it is a picture.
      if (format === 'svg') void reply.type('image/svg+xml; charset=utf-8').header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'");
      else void reply.type('application/json; charset=utf-8');
      // Already text: bypass the response schemas (they describe the document, not this body).
      return reply.serializer((payload: unknown) => String(payload)).send(drawing as never);
    },
  );

  app.get(
    `${API}/:id/logs`,
    {
      schema: {
        summary: "A run's logs",
        description:
          'The runner output, one line each (text/plain). `?follow=true` keeps the response open and streams new lines until the run is final. `?format=json` gives NDJSON objects `{seq, time, line}`; `?after=N` starts after line N.',
        tags: ['scaffolds'],
        params: idParamsSchema,
        querystring: logsQuerySchema,
        response: {
          200: {
            description: 'The log, streamed: one line each (text/plain), or NDJSON `{seq, time, line}` with `?format=json`',
            content: {
              'text/plain': { schema: z.string() },
              'application/x-ndjson': { schema: z.string().describe('One JSON object a line: {"seq": 1, "time": "…", "line": "…"}') },
            },
          },
          ...errorResponsesOf(400, 404),
        },
      },
    },
    async (request, reply) => {
      const { follow, format, after } = request.query;
      const signal = signalOf(reply);
      const lines = await service.openLogs(request.params.id, { follow: follow === 'true', afterSeq: after ?? 0, signal });
      const json = format === 'json';
      void reply
        .type(json ? 'application/x-ndjson; charset=utf-8' : 'text/plain; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('x-content-type-options', 'nosniff');
      // Proxies (nginx) would otherwise hold a followed stream back.
      if (follow === 'true') void reply.header('x-accel-buffering', 'no');
      // A stream bypasses the serializer; the 200 schemas only describe it in the document.
      return reply.send(Readable.from(renderLog(lines, json)) as never);
    },
  );
}

async function* renderLog(lines: AsyncIterable<LogLine>, json: boolean): AsyncGenerator<string> {
  for await (const line of lines) {
    yield json ? `${JSON.stringify({ seq: line.seq, time: line.time.toISOString(), line: line.line })}\n` : `${line.line}\n`;
  }
}
