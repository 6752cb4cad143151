#!/usr/bin/env node
/**
 * A hand-picked mutation sample: realistic one-line bugs in the paths users notice (delivery
 * races, who sees which reply, the request cost limit, tokens, the text rules, paging,
 * notification groups, follows). Each mutant is applied to its source file alone, the test files
 * that guard that path are run, and the file is restored; a mutant is killed when a test fails.
 *
 *   node test/mutation/sample.mjs            every mutant
 *   node test/mutation/sample.mjs B1 M7      only these
 *   node test/mutation/sample.mjs --list     what each mutant changes, without running anything
 *
 * Results go to stdout, one line per mutant, and to mutation-sample.json (in the working
 * directory). Run it with a clean work tree: it writes the sources it mutates and restores them.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const guards = {
  fanout: ['test/feed/fanoutRaces.test.ts', 'test/feed/bulkDelivery.test.ts'],
  visibility: ['test/feed/postVisibility.test.ts', 'test/feed/visibility.test.ts', 'test/feed/visibilityInListsAndNotifications.test.ts'],
  cost: ['test/api/requestLimits.test.ts', 'test/notifications/requestCost.test.ts'],
  tokens: ['test/auth/tokens.test.ts', 'test/auth/accountSettings.test.ts'],
  text: ['test/content/text.test.ts', 'test/graph/userProfiles.test.ts'],
  paging: ['test/content/position.test.ts', 'test/feed/pageMerge.test.ts', 'test/feed/timelineMarkers.test.ts'],
  notifications: ['test/notifications/concurrency.test.ts', 'test/notifications/rules.test.ts', 'test/notifications/largeGroup.test.ts', 'test/notifications/batchedMembers.test.ts'],
  follows: ['test/graph/follow.test.ts', 'test/graph/heldCounts.test.ts'],
};

/** `from` must occur exactly once in `file`; `to` replaces it. B1–B5 break the five behaviours the sample was asked to guard. */
export const mutants = [
  {
    id: 'B1',
    what: 'a delivery checks that its post is still stored with the lookup it made before writing, not after',
    file: 'src/feed/fanout.ts',
    from: 'const stillStored = await this.content.lookups.existing(chunk.map((delivery) => delivery.post.id));',
    to: 'const stillStored = stored;',
    guards: guards.fanout,
  },
  {
    id: 'B2',
    what: 'the replies filter lets every post of a followee through, not only their followers-only ones',
    file: 'src/feed/postVisibility.ts',
    from: "clauses.push({ _v: 'f', _a: { $in: followees } });",
    to: 'clauses.push({ _a: { $in: followees } });',
    guards: guards.visibility,
  },
  {
    id: 'B3',
    what: 'the cost limit reads the page size from first: only',
    file: 'src/api/requestLimits.ts',
    from: "pageSizeOf(argument('first') ?? argument('last'))",
    to: "pageSizeOf(argument('first'))",
    guards: guards.cost,
  },
  {
    id: 'B4',
    what: 'a token held as verified is trusted without looking at its expiry',
    file: 'src/auth/tokens.ts',
    from: 'if (now < known.expiresAtMs) return known.subject;',
    to: 'return known.subject;',
    guards: guards.tokens,
  },
  {
    id: 'B5',
    what: 'only white space counts as blank: zero-width characters and fillers pass as text',
    file: 'src/content/text.ts',
    from: 'const visibleCharacter = /[^\\p{White_Space}\\p{Default_Ignorable_Code_Point}]/u;',
    to: 'const visibleCharacter = /[^\\p{White_Space}]/u;',
    guards: guards.text,
  },
  {
    id: 'M1',
    what: 'a retraction leaves the deliveries no worker has started on the queue',
    file: 'src/feed/fanout.ts',
    from: "await this.work.queue.tasks.deleteMany({ kind: 'deliver', 'payload.post.id': post.id });",
    to: '',
    guards: guards.fanout,
  },
  {
    id: 'M2',
    what: 'a retraction finishing a dead request’s delete leaves the post in its author’s own timeline',
    file: 'src/feed/fanout.ts',
    from: 'await this.backend.removeFrom([post.authorId], post);',
    to: '',
    guards: guards.fanout,
  },
  {
    id: 'M3',
    what: 'a retraction waits for its request when the request is long dead, and not while it may still be deleting',
    file: 'src/feed/fanout.ts',
    from: 'const requestAlive = Date.now() - task.createdAt.getTime() < deletingRequestGraceMs;',
    to: 'const requestAlive = Date.now() - task.createdAt.getTime() > deletingRequestGraceMs;',
    guards: guards.fanout,
  },
  {
    id: 'M4',
    what: 'a delivery of a deleted post waits for it as if not stored yet',
    file: 'src/feed/fanout.ts',
    from: 'if (await this.content.lookups.wasDeleted(post.id)) return;',
    to: '',
    guards: guards.fanout,
  },
  {
    id: 'M5',
    what: 'post(id) does not read the follow list for a followers-only post, so followers cannot open it',
    file: 'src/feed/postVisibility.ts',
    from: "posts.some((post) => post.visibility === 'FOLLOWERS' && post.authorId !== viewerId)",
    to: "posts.some((post) => post.visibility === 'MENTIONED' && post.authorId !== viewerId)",
    guards: guards.visibility,
  },
  {
    id: 'M6',
    what: 'a mentioned-only post is shown to its audience but not to its own author',
    file: 'src/records/posts.ts',
    from: "return viewerId !== null && (viewerId === post.authorId || (post.audience ?? []).includes(viewerId));",
    to: "return viewerId !== null && (post.audience ?? []).includes(viewerId);",
    guards: guards.visibility,
  },
  {
    id: 'M7',
    what: 'the replies filter leaves out the posts addressed to the reader',
    file: 'src/feed/postVisibility.ts',
    from: 'if (sources.addressed) clauses.push({ _to: viewerId });',
    to: '',
    guards: guards.visibility,
  },
  {
    id: 'M8',
    what: 'a fragment spread a second time costs nothing (its cost is not remembered)',
    file: 'src/api/requestLimits.ts',
    from: '          fragmentCosts.set(name, cost);\n',
    to: '',
    guards: guards.cost,
  },
  {
    id: 'M9',
    what: 'the cost of an operation with page-size variables is remembered whatever the variables say',
    file: 'src/api/requestLimits.ts',
    from: 'if (!readsVariables) {',
    to: 'if (readsVariables !== undefined) {',
    guards: guards.cost,
  },
  {
    id: 'M10',
    what: 'a page size above the maximum is priced as asked, not as the page the server returns',
    file: 'src/api/requestLimits.ts',
    from: 'Math.min(raw, maxPageSize)',
    to: 'raw',
    guards: guards.cost,
  },
  {
    id: 'M11',
    what: 'tokens without an expiry are accepted',
    file: 'src/auth/tokens.ts',
    from: "requiredClaims: ['exp', 'sub'],",
    to: "requiredClaims: ['sub'],",
    guards: guards.tokens,
  },
  {
    id: 'M12',
    what: 'a token is checked for its issuer but not its audience',
    file: 'src/auth/tokens.ts',
    from: '        audience: this.issuer,\n',
    to: '',
    guards: guards.tokens,
  },
  {
    id: 'M13',
    what: 'the one-line rule is skipped: display names may hold line breaks',
    file: 'src/content/text.ts',
    from: 'if (controls.test(text) || (!options.multiline && lineBreaks.test(text))) {',
    to: 'if (controls.test(text)) {',
    guards: guards.text,
  },
  {
    id: 'M14',
    what: 'a post of exactly 500 characters is refused',
    file: 'src/content/text.ts',
    from: 'length > maxPostLength ||',
    to: 'length >= maxPostLength ||',
    guards: guards.text,
  },
  {
    id: 'M15',
    what: 'short display text skips the check of marks stacked on one character',
    file: 'src/content/text.ts',
    from: 'if (text.length > maxCharacterUnits) assertCharacterUnits',
    to: 'if (text.length > 2 * maxCharacterUnits) assertCharacterUnits',
    guards: guards.text,
  },
  {
    id: 'M16',
    what: 'the cursor filter drops its same-millisecond clause',
    file: 'src/content/position.ts',
    from: '      { [timeField]: from.createdAt, [idField]: { [operator]: from.id } },\n',
    to: '',
    guards: guards.paging,
  },
  {
    id: 'M17',
    what: 'posts of one millisecond are read in the opposite id order',
    file: 'src/content/position.ts',
    from: 'return { [timeField]: order, [idField]: order };',
    to: 'return { [timeField]: order, [idField]: -order };',
    guards: guards.paging,
  },
  {
    id: 'M18',
    what: 'a leave takes the quick path even when the leaver is the newest actor shown',
    file: 'src/notifications/notificationGroups.ts',
    from: "$or: [{ n: 1 }, { n: { $gt: 1 }, 'a.0.u': { $ne: actor }, $or:",
    to: '$or: [{ n: 1 }, { n: { $gt: 1 }, $or:',
    guards: guards.notifications,
  },
  {
    id: 'M19',
    what: 'a leave from a group of more than 20 fills one place too few',
    file: 'src/notifications/notificationGroups.ts',
    from: 'const wanted = Math.min(Math.max(count, 0), maxActorsShown) - shown.length;',
    to: 'const wanted = Math.min(Math.max(count, 0), maxActorsShown - 1) - shown.length;',
    guards: guards.notifications,
  },
  {
    id: 'M20',
    what: 'a repeated leave is applied again (its token is not checked)',
    file: 'src/notifications/notificationGroups.ts',
    from: "if (!current || (current.tk ?? []).includes(token)) return;",
    to: 'if (!current) return;',
    guards: guards.notifications,
  },
];

function run(mutant) {
  const original = readFileSync(mutant.file, 'utf8');
  const at = original.indexOf(mutant.from);
  if (at < 0 || original.indexOf(mutant.from, at + 1) >= 0) throw new Error(`${mutant.id}: the text to change must occur exactly once in ${mutant.file}`);
  const report = join(tmpdir(), `mutant-${process.pid}-${mutant.id}.json`);
  const restore = () => writeFileSync(mutant.file, original);
  process.once('SIGINT', restore);
  writeFileSync(mutant.file, original.slice(0, at) + mutant.to + original.slice(at + mutant.from.length));
  const started = Date.now();
  try {
    spawnSync('npx', ['vitest', 'run', ...mutant.guards, '--reporter=json', `--outputFile=${report}`], { stdio: 'ignore', timeout: 15 * 60_000 });
  } finally {
    restore();
    process.removeListener('SIGINT', restore);
  }
  let failed = [];
  let ran = false;
  try {
    const results = JSON.parse(readFileSync(report, 'utf8'));
    ran = results.numTotalTests > 0;
    failed = results.testResults.flatMap((file) =>
      file.assertionResults.length === 0 && file.status === 'failed'
        ? [`${file.name.replace(`${process.cwd()}/`, '')} (did not load)`]
        : file.assertionResults.filter((test) => test.status === 'failed').map((test) => `${file.name.replace(`${process.cwd()}/`, '')} > ${test.fullName}`),
    );
    rmSync(report);
  } catch {
    failed = ['(no report: the run itself failed)'];
  }
  return { id: mutant.id, what: mutant.what, file: mutant.file, killed: failed.length > 0, ran, seconds: Math.round((Date.now() - started) / 1000), killedBy: failed };
}

const args = process.argv.slice(2);
if (args.includes('--list')) {
  for (const mutant of mutants) {
    const occurrences = readFileSync(mutant.file, 'utf8').split(mutant.from).length - 1;
    console.log(`${mutant.id}\t${mutant.file}\t${mutant.what}${occurrences === 1 ? '' : `\t(the text to change occurs ${occurrences} times)`}`);
  }
} else {
  const chosen = args.length > 0 ? mutants.filter((mutant) => args.includes(mutant.id)) : mutants;
  const results = [];
  for (const mutant of chosen) {
    const result = run(mutant);
    results.push(result);
    console.log(`${result.id}\t${result.killed ? 'killed' : 'SURVIVED'}\t${result.seconds}s\t${result.what}${result.killed ? `\n\t\t${result.killedBy.slice(0, 3).join('\n\t\t')}` : ''}`);
  }
  const killed = results.filter((result) => result.killed).length;
  console.log(`killed ${killed} of ${results.length} (${Math.round((100 * killed) / results.length)} %)`);
  writeFileSync('mutation-sample.json', `${JSON.stringify(results, null, 2)}\n`);
}
