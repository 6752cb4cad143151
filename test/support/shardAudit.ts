import type { CommandStartedEvent, Document } from 'mongodb';
import { reachOf, shardPlan, type CollectionPlan, type EveryShardShape, type Reach } from '../../src/db/shardPlan.js';

/** One targeting decision of a command (a write command has one per statement). */
export interface Targeting {
  collection: string;
  command: EveryShardShape['command'] | 'insert';
  /** The top-level fields of the filter, sorted: the command's shape. */
  fields: string[];
  reach: Reach;
  /** Why the plan allows it to reach every shard, when it does and may. */
  byDesign: string | null;
  /** Set on a command against a collection the plan does not name. */
  unplanned?: true;
}

/** Commands that address no collection's documents (cursor follow-ups, sessions, index and admin work). */
const notRouted = new Set(['getMore', 'killCursors', 'endSessions', 'hello', 'isMaster', 'ping', 'createIndexes', 'listIndexes', 'listCollections', 'dropDatabase', 'drop', 'buildInfo', 'collMod', 'create', 'abortTransaction', 'commitTransaction']);

/** How each command of `event` would be routed on a cluster sharded as `shardPlan` says; empty for commands that address no documents. */
export function targetingsOf(event: CommandStartedEvent): Targeting[] {
  const name = event.commandName;
  if (notRouted.has(name)) return [];
  const command = event.command;
  const collection = String(command[name]);
  const statements = filtersOf(name, command);
  if (statements === null) return [];
  const plan = (shardPlan as Record<string, CollectionPlan>)[collection];
  return statements.map(({ kind, filter }) => {
    const fields = Object.keys(filter ?? {}).sort();
    if (!plan) return { collection, command: kind, fields, reach: 'every', byDesign: null, unplanned: true };
    if (!('key' in plan)) return { collection, command: kind, fields, reach: 'one', byDesign: null };
    const reach = kind === 'insert' ? insertReach(plan.key, filter) : reachOf(plan.key, filter);
    const allowed = reach === 'every' ? (plan.everyShard ?? []).find((shape) => shape.command === kind && sameFields(shape.fields, fields)) : undefined;
    return { collection, command: kind, fields, reach, byDesign: allowed?.why ?? null };
  });
}

function filtersOf(name: string, command: Document): { kind: Targeting['command']; filter: Document | undefined }[] | null {
  switch (name) {
    case 'find':
      return [{ kind: 'find', filter: command.filter }];
    case 'count':
    case 'distinct':
      return [{ kind: name, filter: command.query }];
    case 'findAndModify':
      return [{ kind: 'findAndModify', filter: command.query }];
    case 'aggregate': {
      const pipeline = command.pipeline as Document[];
      // A change stream reads the oplog of every shard by nature: the live events section of docs/scaling.md.
      if (pipeline[0]?.$changeStream) return null;
      return [{ kind: 'aggregate', filter: pipeline[0]?.$match }];
    }
    case 'update':
      return (command.updates as Document[]).map((statement) => ({ kind: 'update' as const, filter: statement.q }));
    case 'delete':
      return (command.deletes as Document[]).map((statement) => ({ kind: 'delete' as const, filter: statement.q }));
    case 'insert':
      return (command.documents as Document[]).map((document) => ({ kind: 'insert' as const, filter: document }));
    default:
      throw new Error(`the shard audit does not know the command ${name}`);
  }
}

/** An inserted document goes to the shard of its key: it must carry every field of it. */
function insertReach(key: Record<string, unknown>, document: Document | undefined): Reach {
  return Object.keys(key).every((path) => path.split('.').reduce<any>((value, part) => value?.[part], document) !== undefined) ? 'one' : 'every';
}

const sameFields = (a: readonly string[], b: readonly string[]) => a.length === b.length && [...a].sort().every((field, i) => field === b[i]);
