/**
 * The run as the service serves it, typed from the server's own wire schemas
 * (`runViewSchema`, `runDetailSchema`), so the dashboard and the API cannot
 * drift. Types only and free of the browser, so the pure view modules (tested
 * under Node) can use them.
 */
import type { z } from 'zod';
import type { removalPreviewSchema, removalSchema } from '../../src/http/cluster-schemas.js';
import type { runDetailSchema, runViewSchema } from '../../src/http/wire-schemas.js';
import type { RunAction } from '../../src/model/run-action.js';

export type { RunAction };
/** A run (`GET /api/v1/scaffolds`): a scaffold, an upgrade or a removal. */
export type Run = z.output<typeof runViewSchema>;
/** A run with its steps (`GET /api/v1/scaffolds/{id}`): its action's table, seven for a scaffold, three for an upgrade, five for a removal. */
export type RunDetail = z.output<typeof runDetailSchema>;
export type RunStep = RunDetail['steps'][number];
export type RunStatus = Run['status'];
export type StepStatus = RunStep['status'];
/** An upgrade's or a removal's commit, in files; null for a scaffold or before it ended. */
export type RunChangesView = NonNullable<Run['changes']>;

/** What `DELETE /api/v1/clusters/{name}` answers (202): the removal run it started, and what it will remove and keep. */
export type Removal = z.output<typeof removalSchema>;
/** What `DELETE /api/v1/clusters/{name}?dry_run=true` answers (200): the files a removal would delete and keep; nothing started. */
export type RemovalPreview = z.output<typeof removalPreviewSchema>;
