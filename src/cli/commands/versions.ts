import { Client, Connection } from '@temporalio/client';
import { loadCliConfig, fail } from '../config';
import { workflowPatches } from '../workflow-patches';

/** One row of `durapay versions`: how many open runs of a workflow type lack one of its markers. */
export interface VersionRow {
  workflow_type: string;
  marker: string;
  open_runs_lacking: number;
  open_runs: number;
}

/** Whether a name goes into a visibility query as it is: no quote or backslash to escape. */
const queryable = (value: string) => value !== '' && !/['"\\]/.test(value);

/** A string in a visibility query. */
function literal(value: string): string {
  if (!queryable(value)) throw new Error(`${JSON.stringify(value)} cannot be put in a visibility query`);
  return `'${value}'`;
}

/** The open (Running) runs of a workflow type, on one task queue or all. */
export function openRunsQuery(workflowType: string, taskQueue?: string): string {
  const onQueue = taskQueue === undefined ? '' : ` AND TaskQueue = ${literal(taskQueue)}`;
  return `WorkflowType = ${literal(workflowType)} AND ExecutionStatus = 'Running'${onQueue}`;
}

/**
 * Those of them whose TemporalChangeVersion (the KeywordList the SDK fills as `patched()` first
 * answers true in a run) does not hold the marker. `!=` alone is not enough: a run that has
 * recorded no marker at all has no TemporalChangeVersion, which PostgreSQL's visibility (the
 * production server's) leaves out of `!=` and SQLite's (the dev server's) counts; `IS NULL`
 * counts it on both.
 */
export function lackingQuery(workflowType: string, marker: string, taskQueue?: string): string {
  const m = literal(marker);
  return `${openRunsQuery(workflowType, taskQueue)} AND (TemporalChangeVersion IS NULL OR TemporalChangeVersion != ${m})`;
}

/** Counts, for each marker the code declares, the open runs of its workflow type that lack it. */
export async function countVersions(client: Client, taskQueue?: string): Promise<VersionRow[]> {
  const rows: VersionRow[] = [];
  // One count after another: production's frontend allows a namespace 10 visibility requests a second.
  for (const { workflowType, markers } of workflowPatches()) {
    if (markers.length === 0) continue;
    const open = (await client.workflow.count(openRunsQuery(workflowType, taskQueue))).count;
    for (const marker of markers) {
      const lacking = (await client.workflow.count(lackingQuery(workflowType, marker, taskQueue))).count;
      rows.push({ workflow_type: workflowType, marker, open_runs_lacking: lacking, open_runs: open });
    }
  }
  return rows;
}

function table(rows: VersionRow[]): string {
  const header = ['workflow type', 'marker', 'open runs lacking it', 'open runs'];
  const cells = rows.map((r) => [
    r.workflow_type,
    r.marker,
    String(r.open_runs_lacking),
    String(r.open_runs),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) =>
    c
      .map((v, i) => (i < 2 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return `${[header, ...cells].map(line).join('\n')}\n`;
}

/** `durapay versions`. */
export async function versions(opts: { json?: boolean; taskQueue?: string }): Promise<void> {
  const config = loadCliConfig();
  const { address, namespace } = config.temporal;
  if (!address) fail('set TEMPORAL_ADDRESS (npm start prints it) to the server the worker uses');
  if (opts.taskQueue !== undefined && !queryable(opts.taskQueue))
    fail(
      `--task-queue ${JSON.stringify(opts.taskQueue)}: a task queue with a quote or a backslash cannot be queried`,
    );
  // A count reads no payload: no payload keys needed, so an operator's shell with only the
  // server's address can run it.
  const connection = await Connection.connect({ address, connectTimeout: '5 seconds' }).catch((err) =>
    fail(
      `Temporal at ${address} did not answer (${err instanceof Error ? err.message : String(err)}): is TEMPORAL_ADDRESS right, and the server up?`,
    ),
  );
  let rows: VersionRow[];
  try {
    rows = await countVersions(new Client({ connection, namespace }), opts.taskQueue);
  } catch (err) {
    return fail(
      `counting open runs in namespace ${namespace} at ${address} failed: ${err instanceof Error ? err.message : String(err)}`,
    );
  } finally {
    await connection.close();
  }

  const unmarked = workflowPatches()
    .filter((w) => w.markers.length === 0)
    .map((w) => w.workflowType);
  if (opts.json) {
    for (const row of rows) process.stdout.write(`${JSON.stringify(row)}\n`);
    return;
  }
  const where = `namespace ${namespace}, ${opts.taskQueue ? `task queue ${opts.taskQueue}` : 'every task queue'}`;
  if (rows.length === 0) console.error(`no workflow type asks a patch marker (${where})`);
  else {
    process.stdout.write(table(rows));
    console.error(
      `Open runs: Running now in ${where}. A marker with 0 open runs lacking it may be deprecated ` +
        '(docs/operations.md, "Retiring a workflow version", step 4).',
    );
  }
  if (unmarked.length > 0) console.error(`No patch markers: ${unmarked.join(', ')}.`);
}
