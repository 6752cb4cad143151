import { readFileSync } from 'node:fs';
import { buildSchema, isObjectType, parse, TypeInfo, visit, visitWithTypeInfo } from 'graphql';
import type { CommandStartedEvent } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedStrategies } from '../../src/config.js';
import { reachOf, shardPlan } from '../../src/db/shardPlan.js';
import { liveClient } from '../live/liveClient.js';
import { runQueuedAsWorker } from '../support/queuedTasks.js';
import { targetingsOf, type Targeting } from '../support/shardAudit.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { listSubscription, liveSubscriptions, signUpWorkloadAccounts, workload, type WorkloadIds } from './shardWorkload.js';

const schema = buildSchema(readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8'));

describe('the workload the audit runs', () => {
  it('selects every field of every type the schema has', () => {
    const selected = new Set<string>();
    const typeInfo = new TypeInfo(schema);
    for (const source of [...workload.map((step) => step.query), ...liveSubscriptions, listSubscription('x')]) {
      visit(
        parse(source),
        visitWithTypeInfo(typeInfo, {
          Field() {
            const parent = typeInfo.getParentType();
            if (parent) selected.add(`${parent.name}.${typeInfo.getFieldDef()?.name}`);
          },
        }),
      );
    }
    const every = Object.values(schema.getTypeMap())
      .filter((type) => isObjectType(type) && !type.name.startsWith('__'))
      .flatMap((type) => Object.keys((type as any).getFields()).map((field) => `${type.name}.${field}`));
    expect(every.filter((field) => !selected.has(field))).toEqual([]);
  });
});

describe('where a filter sends a command', () => {
  it('to one shard when it fixes the key, to the named shards for a list, to every shard otherwise', () => {
    expect(reachOf({ _id: 'hashed' }, { _id: 'ada' })).toBe('one');
    expect(reachOf({ _id: 'hashed' }, { _id: { $in: ['ada', 'bea'] }, readAt: { $gte: new Date() } })).toBe('named');
    expect(reachOf({ _id: 'hashed' }, { nameLower: { $gte: 'a', $lt: 'b' } })).toBe('every');
    expect(reachOf({ _id: 'hashed' }, { _id: { $gt: 'a' } })).toBe('every');
    expect(reachOf({ _f: 1, _t: 1 }, { _f: 'ada', _t: { $gt: 'bea' } })).toBe('one');
    expect(reachOf({ _f: 1, _t: 1 }, { _t: 'ada' })).toBe('every');
    expect(reachOf({ '_id._u': 1, '_id._t': 1 }, { _id: { _u: 'ada', _t: new Date() } })).toBe('one');
    expect(reachOf({ '_id._u': 1, '_id._t': 1 }, { '_id._u': 'ada' })).toBe('one');
    expect(reachOf({ _id: 'hashed' }, { $or: [{ _id: 'ada' }, { _id: 'bea' }] })).toBe('one');
    expect(reachOf({ _id: 'hashed' }, { $or: [{ _id: 'ada' }, { other: 'bea' }] })).toBe('every');
    expect(reachOf({ _id: 'hashed' }, { $and: [{ other: 1 }, { _id: 'ada' }] })).toBe('one');
  });
});

/** Fanout on write keeps posts embedded or linked; fanout on read keeps none. */
const runs = feedStrategies.flatMap((strategy) => (strategy === 'fanout-on-read' ? [[strategy, 'embed']] : [[strategy, 'embed'], [strategy, 'link']]) as [string, string][]);

describe.each(runs)('the commands of every operation on a sharded cluster: %s, %s', (strategy, content) => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const seen: { label: string; targeting: Targeting; event: CommandStartedEvent }[] = [];
  let label = 'sign-up';

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: strategy, TIMELINE_CONTENT: content, FANOUT_WORKERS: '0', FANOUT_BATCH: '2', FANOUT_PULL_THRESHOLD: '4', STAFF_HANDLES: 'pop' });
    Object.assign(tokens, await signUpWorkloadAccounts(app));
    app.database.client.on('commandStarted', (event) => {
      for (const targeting of targetingsOf(event)) seen.push({ label, targeting, event });
    });
  }, 60_000);
  afterAll(() => app?.stop());

  it('sends no command to every shard but those the plan lists as such by design', async () => {
    const ids: WorkloadIds = {};
    const live = liveClient(app, tokens.bea!);
    const events: unknown[] = [];
    const watch = (query: string) => live.subscribe({ query }, { next: (event) => void events.push(event), error: () => {}, complete: () => {} });
    for (const query of liveSubscriptions) watch(query);
    try {
      for (const step of workload) {
        label = step.label;
        const token = ids[`${step.as}Token`] ?? tokens[step.as];
        if (step.before) {
          label = step.before.http;
          await step.before.run(app, token!, ids);
          label = step.label;
        }
        const answer = await app.gql(step.query, step.variables?.(ids) ?? {}, token);
        expect({ step: step.label, errors: answer.errors }).toEqual({ step: step.label, errors: undefined });
        step.keep?.(answer.data, ids);
        if (step.label === 'addToList') watch(listSubscription(ids.list!));
        await runQueuedAsWorker(app, async (kind, run) => {
          label = `work: ${kind}`;
          await run();
        });
      }
      label = 'sweep';
      await app.services.feed.repairStalled();
      // The live readers were told: the change stream's events reached this process's subscribers.
      expect(events.length).toBeGreaterThan(0);
    } finally {
      await live.dispose();
    }

    const byLabel = new Map<string, { one: number; named: number; every: number; byDesign: number }>();
    for (const { label: name, targeting } of seen) {
      const tally = byLabel.get(name) ?? { one: 0, named: 0, every: 0, byDesign: 0 };
      tally[targeting.reach] += 1;
      if (targeting.byDesign) tally.byDesign += 1;
      byLabel.set(name, tally);
    }
    if (process.env.SHOW_TARGETING) {
      const runsOf = (name: string) => workload.filter((step) => step.label === name).length || 1;
      const each = (count: number, name: string) => +(count / runsOf(name)).toFixed(1);
      console.log(`\n${strategy}, ${content}: commands per operation (work: per kind, in all): to one shard / to named shards / to every shard (of which by design)`);
      for (const [name, tally] of [...byLabel].sort()) {
        console.log(`  ${name} ×${runsOf(name)}: ${each(tally.one, name)} / ${each(tally.named, name)} / ${each(tally.every, name)} (${each(tally.byDesign, name)})`);
      }
      const shapes = new Map<string, Set<string>>();
      for (const { label: name, targeting } of seen) {
        if (targeting.reach !== 'every') continue;
        const shape = `${targeting.collection} ${targeting.command} {${targeting.fields.join(', ')}}${targeting.byDesign ? ' (by design)' : ''}`;
        shapes.set(shape, (shapes.get(shape) ?? new Set()).add(name));
      }
      for (const [shape, labels] of shapes) console.log(`  every shard: ${shape} <- ${[...labels].join(', ')}`);
    }
    const unplanned = seen.filter(({ targeting }) => targeting.unplanned).map(({ targeting }) => targeting.collection);
    expect([...new Set(unplanned)]).toEqual([]);
    const scattered = seen
      .filter(({ targeting }) => targeting.reach === 'every' && !targeting.byDesign)
      .map(({ label: name, targeting }) => `${name}: ${targeting.collection} ${targeting.command} {${targeting.fields.join(', ')}}`);
    expect([...new Set(scattered)]).toEqual([]);
    expect(Object.keys(shardPlan)).toEqual(expect.arrayContaining([...new Set(seen.map(({ targeting }) => targeting.collection))]));
    // Every collection the workload left in the database is in the plan `npm run shard-keys` prints.
    const present = (await app.database.db.listCollections({}, { nameOnly: true }).toArray()).map((collection) => collection.name);
    expect(Object.keys(shardPlan)).toEqual(expect.arrayContaining(present.filter((name) => !name.startsWith('system.'))));
  }, 120_000);
});
