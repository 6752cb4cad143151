#!/usr/bin/env node
/**
 * A hand-made mutation sample: realistic one-line bugs in the paths users notice (paging and
 * cursors, who sees which post, follow counts, the text rules, the request cost limit, tokens,
 * fanout deliveries and retractions, notification groups). Each mutant is applied to its source
 * file alone, the test files most likely to catch it are run, and the file is restored; a mutant
 * that no test fails there is run again against every test file of its area before it counts as
 * survived. A mutant marked `breaks` is one of the five behaviours the suite was asked to guard,
 * broken by hand.
 *
 *   npm run mutation:sample                   every mutant (about 35 min on two cores)
 *   npm run mutation:sample -- F1 V5          only these
 *   npm run mutation:sample -- --list         what each mutant changes, running nothing
 *
 * Results go to stdout, one line per mutant, and to mutation-sample.json in the working directory.
 * Run it on a clean work tree, with nothing else editing src/: it writes the sources it mutates
 * and restores them (also on Ctrl-C).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Every test file that guards an area: a mutant the first run leaves alive meets all of them. */
const areas = {
  paging: ['test/content/position.test.ts', 'test/feed/pageMerge.test.ts', 'test/api/timeline.test.ts', 'test/feed/shortTimeline.test.ts', 'test/feed/listTimeline.test.ts', 'test/content/outboxes.test.ts', 'test/feed/conformance.test.ts'],
  visibility: ['test/feed/postVisibility.test.ts', 'test/feed/visibility.test.ts', 'test/live/visibility.test.ts', 'test/feed/visibilityInListsAndNotifications.test.ts', 'test/api/mentions.test.ts', 'test/content/mentions.test.ts'],
  filters: ['test/feed/visibility.test.ts', 'test/graph/readerFilters.test.ts', 'test/live/readerFilters.test.ts', 'test/feed/conformance.test.ts', 'test/api/timeline.test.ts'],
  graph: ['test/feed/strategySwitch.test.ts', 'test/feed/accountRemoval.test.ts', 'test/graph/follow.test.ts', 'test/graph/heldCounts.test.ts', 'test/graph/userProfiles.test.ts', 'test/feed/fanoutRaces.test.ts', 'test/graph/followCrash.test.ts', 'test/api/errors.test.ts'],
  text: ['test/content/text.test.ts', 'test/graph/userProfiles.test.ts', 'test/graph/readerFilters.test.ts', 'test/graph/lists.test.ts', 'test/auth/rateLimits.test.ts'],
  limits: ['test/api/requestLimits.test.ts', 'test/notifications/requestCost.test.ts', 'test/api/directQueries.test.ts', 'test/api/errors.test.ts', 'test/live/connectionRules.test.ts'],
  tokens: ['test/auth/tokens.test.ts', 'test/auth/accountSettings.test.ts', 'test/auth/storedSecret.test.ts', 'test/live/connectionRules.test.ts'],
  fanout: ['test/feed/fanoutRaces.test.ts', 'test/feed/bulkDelivery.test.ts', 'test/feed/followDuringDelivery.test.ts', 'test/feed/largeAudience.test.ts', 'test/feed/conformance.test.ts'],
  notifications: ['test/notifications/replayedChanges.test.ts', 'test/notifications/concurrency.test.ts', 'test/notifications/rules.test.ts', 'test/notifications/largeGroup.test.ts', 'test/notifications/batchedMembers.test.ts', 'test/notifications/reading.test.ts', 'test/notifications/crash.test.ts'],
};

/**
 * `from` must occur exactly once in `file`; `to` replaces it. `first`: the test files run first.
 * B1–B5 (in `breaks`) are the five behaviours: a post deleted while its delivery writes, a
 * followee's mentioned-only reply, `last:` in the cost limit, a held token's expiry, blank text.
 */
export const mutants = [
  {
    id: "P1",
    area: 'paging',
    what: "ties in time ordered oldest id first",
    file: "src/content/position.ts",
    from: "return byTime !== 0 ? byTime : Buffer.compare(b.id.id, a.id.id);",
    to: "return byTime !== 0 ? byTime : Buffer.compare(a.id.id, b.id.id);",
    first: ["test/content/position.test.ts"],
  },
  {
    id: "P2",
    area: 'paging',
    what: "an older page includes its cursor post",
    file: "src/content/position.ts",
    from: "return direction === 'older' ? order > 0 : order < 0;",
    to: "return direction === 'older' ? order >= 0 : order < 0;",
    first: ["test/api/timeline.test.ts"],
  },
  {
    id: "P3",
    area: 'paging',
    what: "the same-millisecond clause of the cursor filter dropped",
    file: "src/content/position.ts",
    from: "      { [timeField]: from.createdAt, [idField]: { [operator]: from.id } },\n",
    to: "",
    first: ["test/content/position.test.ts"],
  },
  {
    id: "P4",
    area: 'paging',
    what: "ids sorted ascending whatever the direction",
    file: "src/content/position.ts",
    from: "return { [timeField]: order, [idField]: order };",
    to: "return { [timeField]: order, [idField]: 1 };",
    first: ["test/content/position.test.ts"],
  },
  {
    id: "P5",
    area: 'paging',
    what: "cursor decoded a millisecond late",
    file: "src/content/position.ts",
    from: "return { createdAt: new Date(Number(match[1])), id: new ObjectId(match[2]) };",
    to: "return { createdAt: new Date(Number(match[1]) + 1), id: new ObjectId(match[2]) };",
    first: ["test/content/position.test.ts"],
  },
  {
    id: "P6",
    area: 'paging',
    what: "page ends at exactly limit kept: hasMore false though more exist",
    file: "src/feed/pageMerge.ts",
    from: "if (kept.length > request.limit || !horizon) {",
    to: "if (kept.length >= request.limit || !horizon) {",
    first: ["test/feed/listTimeline.test.ts"],
  },
  {
    id: "P7",
    area: 'paging',
    what: "merge horizon taken at the farthest source instead of the nearest",
    file: "src/feed/pageMerge.ts",
    from: "if (farthest && (!horizon || isBeyond(horizon, request.direction, farthest))) horizon = farthest;",
    to: "if (farthest && (!horizon || isBeyond(farthest, request.direction, horizon))) horizon = farthest;",
    first: ["test/feed/pageMerge.test.ts"],
  },
  {
    id: "P8",
    area: 'paging',
    what: "newer pages not turned newest first",
    file: "src/feed/pageMerge.ts",
    from: "return { items: request.direction === 'older' ? items : items.reverse(), hasMore: kept.length > request.limit };",
    to: "return { items, hasMore: kept.length > request.limit };",
    first: ["test/api/timeline.test.ts"],
  },
  {
    id: "P9",
    area: 'paging',
    what: "cache page says more exist when exactly limit are held",
    file: "src/feed/entries.ts",
    from: "    hasMore: nearest.length > request.limit,",
    to: "    hasMore: nearest.length >= request.limit,",
    first: ["test/feed/pageMerge.test.ts", "test/content/position.test.ts"],
  },
  {
    id: "P10",
    area: 'paging',
    what: "endCursor of the first item",
    file: "src/api/connections.ts",
    from: "cursorOf(page.items[0]), cursorOf(page.items.at(-1))),",
    to: "cursorOf(page.items[0]), cursorOf(page.items[0])),",
    first: ["test/api/timeline.test.ts"],
  },
  {
    id: "P11",
    area: 'paging',
    what: "first: 0 accepted",
    file: "src/api/connections.ts",
    from: "if (value < 1 || value > maxPageSize) throw",
    to: "if (value < 0 || value > maxPageSize) throw",
    first: ["test/api/errors.test.ts"],
  },
  {
    id: "P12",
    area: 'paging',
    what: "hasPreviousPage false after a cursor",
    file: "src/api/connections.ts",
    from: "hasPreviousPage: direction === 'backward' ? hasMore : cameFromCursor,",
    to: "hasPreviousPage: direction === 'backward' ? hasMore : false,",
    first: ["test/api/timeline.test.ts"],
  },
  {
    id: "P13",
    area: 'paging',
    what: "sized bucket takes one entry over its size",
    file: "src/feed/strategies/sizedBuckets.ts",
    from: "filter: { _u: userId, _s: { $lt: size }, '_c._id': { $ne: post.id } },",
    to: "filter: { _u: userId, _s: { $lte: size }, '_c._id': { $ne: post.id } },",
    first: ["test/feed/conformance.test.ts"],
  },
  {
    id: "P14",
    area: 'paging',
    what: "capped cache keeps its oldest entries",
    file: "src/feed/strategies/timelineCache.ts",
    from: "                  $slice: -this.options.cacheSize,",
    to: "                  $slice: this.options.cacheSize,",
    first: ["test/feed/shortTimeline.test.ts"],
  },
  {
    id: "V1",
    area: 'visibility',
    what: "author cannot see own followers-only post",
    file: "src/records/posts.ts",
    from: "      return viewerId !== null && (viewerId === authorId || follows(authorId));",
    to: "      return viewerId !== null && follows(authorId);",
    first: ["test/live/visibility.test.ts"],
  },
  {
    id: "V2",
    area: 'visibility',
    what: "mentioned-only post visible to the author's followers",
    file: "src/records/posts.ts",
    from: "return viewerId !== null && (viewerId === authorId || shownTo!.audience.includes(viewerId));",
    to: "return viewerId !== null && (viewerId === authorId || follows(authorId) || shownTo!.audience.includes(viewerId));",
    first: ["test/live/visibility.test.ts"],
  },
  {
    id: "V3",
    area: 'visibility',
    what: "reply takes the wider visibility",
    file: "src/records/posts.ts",
    from: "  visibilityOrder.indexOf(a) >= visibilityOrder.indexOf(b) ? a : b;",
    to: "  visibilityOrder.indexOf(a) <= visibilityOrder.indexOf(b) ? a : b;",
    first: ["test/feed/postVisibility.test.ts"],
  },
  {
    id: "V4",
    area: 'visibility',
    what: "mentioned-only audience not stored",
    file: "src/records/posts.ts",
    from: "  return visibility === 'MENTIONED' ? { _v: storedVisibility[visibility], _to: [...audience] } : { _v: storedVisibility[visibility] };",
    to: "  return { _v: storedVisibility[visibility] };",
    first: ["test/feed/postVisibility.test.ts"],
  },
  {
    id: "V5",
    breaks: "B2",
    area: 'visibility',
    what: "replies filter lists every post of followers-only followees",
    file: "src/feed/postVisibility.ts",
    from: "if (followees.length > 0) clauses.push({ _v: 'f', _a: { $in: followees } });",
    to: "if (followees.length > 0) clauses.push({ _a: { $in: followees } });",
    first: ["test/feed/postVisibility.test.ts"],
  },
  {
    id: "V6",
    area: 'visibility',
    what: "replies filter lists every mentioned-only post to anyone addressed",
    file: "src/feed/postVisibility.ts",
    from: "if (sources.addressed) clauses.push({ _to: viewerId });",
    to: "if (sources.addressed) clauses.push({ _v: 'm' });",
    first: ["test/feed/postVisibility.test.ts"],
  },
  {
    id: "V7",
    area: 'visibility',
    what: "follow list not read for followers-only posts",
    file: "src/feed/postVisibility.ts",
    from: "posts.some((post) => post.body.visibility === 'FOLLOWERS' && post.authorId !== viewerId)",
    to: "posts.some((post) => post.body.visibility === 'MENTIONED' && post.authorId !== viewerId)",
    first: ["test/feed/visibilityInListsAndNotifications.test.ts"],
  },
  {
    id: "V8",
    area: 'filters',
    what: "muted or blocked authors shown",
    file: "src/feed/visibility.ts",
    from: "  if (reader.view.hides(entry.authorId)) return false;\n  if (addressedTo",
    to: "  if (addressedTo",
    first: ["test/live/readerFilters.test.ts"],
  },
  {
    id: "V9",
    area: 'filters',
    what: "replies to hidden accounts shown",
    file: "src/feed/visibility.ts",
    from: "  return reader.follows.has(replyTo.authorId) && !reader.view.hides(replyTo.authorId);",
    to: "  return reader.follows.has(replyTo.authorId);",
    first: ["test/feed/visibility.test.ts"],
  },
  {
    id: "V10",
    area: 'filters',
    what: "latest repost shown instead of the earliest",
    file: "src/feed/visibility.ts",
    from: "if (!current || compareNewestFirst(repost, current) > 0) earliest.set(key, repost);",
    to: "if (!current || compareNewestFirst(repost, current) < 0) earliest.set(key, repost);",
    first: ["test/live/readerFilters.test.ts"],
  },
  {
    id: "V11",
    area: 'visibility',
    what: "removal of mentioned-only post sent to all followers",
    file: "src/feed/timelineReading.ts",
    from: "    if (!visibleTo(removal.authorId, removal, viewerId, () => true)) return false;\n",
    to: "",
    first: ["test/live/visibility.test.ts"],
  },
  {
    id: "G1",
    area: 'graph',
    what: "follower's followerCount counted instead of followingCount",
    file: "src/graph/followPairs.ts",
    from: "            { $inc: { followingCount: delta, countVersion: 1, followingVersion: 1 }, $push: { pendingCounts: token! } },",
    to: "            { $inc: { followerCount: delta, countVersion: 1, followingVersion: 1 }, $push: { pendingCounts: token! } },",
    first: ["test/graph/heldCounts.test.ts", "test/graph/follow.test.ts"],
  },
  {
    id: "G2",
    area: 'graph',
    what: "followee count not guarded by the change token",
    file: "src/graph/followPairs.ts",
    from: "          { _id: pair.t, pendingCounts: { $ne: token } },",
    to: "          { _id: pair.t },",
    first: ["test/graph/follow.test.ts"],
  },
  {
    id: "G3",
    area: 'graph',
    what: "follower list page repeats the cursor",
    file: "src/graph/userGraphService.ts",
    from: "_t: { [forward ? '$gt' : '$lt']: page.from } };",
    to: "_t: { [forward ? '$gte' : '$lte']: page.from } };",
    first: ["test/api/timeline.test.ts"],
  },
  {
    id: "G4",
    area: 'graph',
    what: "last partial follower batch dropped (a rebuild or an account removal misses those followers)",
    file: "src/graph/userGraphService.ts",
    from: "    if (batch.length > 0) yield batch;\n  }\n\n  /**\n   * The followers of each",
    to: "  }\n\n  /**\n   * The followers of each",
    first: ["test/feed/strategySwitch.test.ts", "test/feed/accountRemoval.test.ts"],
  },
  {
    id: "G5",
    area: 'graph',
    what: "self-follow allowed",
    file: "src/graph/userGraphService.ts",
    from: "    if (followerId === followeeId) throw badInput('You cannot follow yourself');",
    to: "",
    first: ["test/api/errors.test.ts"],
  },
  {
    id: "G6",
    area: 'graph',
    what: "repair counts a finished unfollow as a follow",
    file: "src/graph/followPairs.ts",
    from: "        this.users.updateOne({ _id: pair.t, pendingCounts: { $ne: token } }, { $inc: { followerCount: delta, countVersion: 1 }, $push: { pendingCounts: token } }),",
    to: "        this.users.updateOne({ _id: pair.t, pendingCounts: { $ne: token } }, { $inc: { followerCount: 1, countVersion: 1 }, $push: { pendingCounts: token } }),",
    first: ["test/graph/follow.test.ts"],
  },
  {
    id: "T1",
    breaks: "B5",
    area: 'text',
    what: "zero-width characters count as visible",
    file: "src/content/text.ts",
    from: "const visibleCharacter = /[^\\p{White_Space}\\p{Default_Ignorable_Code_Point}]/u;",
    to: "const visibleCharacter = /[^\\p{White_Space}]/u;",
    first: ["test/content/text.test.ts"],
  },
  {
    id: "T2",
    area: 'text',
    what: "500 characters refused",
    file: "src/content/text.ts",
    from: "if (length < 1 || length > maxPostLength || !visibleCharacter.test(message)) {",
    to: "if (length < 1 || length >= maxPostLength || !visibleCharacter.test(message)) {",
    first: ["test/content/text.test.ts"],
  },
  {
    id: "T3",
    area: 'text',
    what: "post text not trimmed",
    file: "src/content/text.ts",
    from: "  const message = text.trim();",
    to: "  const message = text;",
    first: ["test/content/text.test.ts"],
  },
  {
    id: "T4",
    area: 'text',
    what: "line breaks allowed where single-line, refused where multiline",
    file: "src/content/text.ts",
    from: "if (controls.test(text) || (!options.multiline && lineBreaks.test(text))) {",
    to: "if (controls.test(text) || (options.multiline && lineBreaks.test(text))) {",
    first: ["test/content/text.test.ts"],
  },
  {
    id: "T5",
    area: 'text',
    what: "bidi isolates allowed",
    file: "src/content/text.ts",
    from: "const bidiControls = /[\\u202A-\\u202E\\u2066-\\u2069]/u;",
    to: "const bidiControls = /[\\u202A-\\u202E]/u;",
    first: ["test/content/text.test.ts"],
  },
  {
    id: "T6",
    area: 'text',
    what: "stacked marks unchecked in short names and filters",
    file: "src/content/text.ts",
    from: "  if (text.length > maxCharacterUnits) assertCharacterUnits(measure(text).longest, what);",
    to: "  if (text.length > maxCharacterUnits * 2) assertCharacterUnits(measure(text).longest, what);",
    first: ["test/content/text.test.ts"],
  },
  {
    id: "L1",
    breaks: "B3",
    area: 'limits',
    what: "last: priced at the default page",
    file: "src/api/requestLimits.ts",
    from: "pageSizeOf(argument('first') ?? argument('last'))",
    to: "pageSizeOf(argument('first'))",
    first: ["test/api/requestLimits.test.ts"],
  },
  {
    id: "L2",
    area: 'limits',
    what: "the cost worked out for a query's first page-size variables is used for any later ones of the same type",
    file: "src/api/requestLimits.ts",
    from: "`${typeof variables[name]}:${String(variables[name])}`",
    to: "`${typeof variables[name]}`",
    first: ["test/api/directQueries.test.ts"],
  },
  {
    id: "L3",
    area: 'limits',
    what: "budgets of signed-in and anonymous swapped",
    file: "src/api/requestLimits.ts",
    from: "const limit = options.signedIn ? limits.maxCost : limits.maxCostAnonymous;",
    to: "const limit = options.signedIn ? limits.maxCostAnonymous : limits.maxCost;",
    first: ["test/api/requestLimits.test.ts"],
  },
  {
    id: "L4",
    area: 'limits',
    what: "one mutation more than the limit allowed",
    file: "src/api/requestLimits.ts",
    from: "if (roots.size > limits.maxRootMutations) {",
    to: "if (roots.size > limits.maxRootMutations + 1) {",
    first: ["test/api/requestLimits.test.ts"],
  },
  {
    id: "L5",
    area: 'limits',
    what: "page size not multiplied in",
    file: "src/api/requestLimits.ts",
    from: "total += 1 + size * selectionCost(selection.selectionSet, child);",
    to: "total += 1 + selectionCost(selection.selectionSet, child);",
    first: ["test/api/requestLimits.test.ts"],
  },
  {
    id: "L6",
    area: 'limits',
    what: "inline fragments cost nothing",
    file: "src/api/requestLimits.ts",
    from: "        total += selectionCost(selection.selectionSet, condition);",
    to: "        total += 0;",
    first: ["test/api/requestLimits.test.ts"],
  },
  {
    id: "K1",
    breaks: "B4",
    area: 'tokens',
    what: "held token never expires",
    file: "src/auth/tokens.ts",
    from: "      if (now < known.expiresAtMs) return known.subject;",
    to: "      return known.subject;",
    first: ["test/auth/tokens.test.ts"],
  },
  {
    id: "K2",
    area: 'tokens',
    what: "token without expiry accepted",
    file: "src/auth/tokens.ts",
    from: "        requiredClaims: ['exp', 'sub'],",
    to: "        requiredClaims: ['sub'],",
    first: ["test/auth/tokens.test.ts"],
  },
  {
    id: "K3",
    area: 'tokens',
    what: "audience not checked",
    file: "src/auth/tokens.ts",
    from: "        audience: this.issuer,\n        requiredClaims",
    to: "        requiredClaims",
    first: ["test/auth/tokens.test.ts"],
  },
  {
    id: "K4",
    area: 'tokens',
    what: "token generation ignored (password change keeps old tokens)",
    file: "src/graph/userAccounts.ts",
    from: "return user?.accountId === accountId && user.tokenGeneration === generation;",
    to: "return user?.accountId === accountId;",
    first: ["test/auth/accountSettings.test.ts"],
  },
  {
    id: "K5",
    area: 'tokens',
    what: "bare token accepted without Bearer",
    file: "src/auth/tokens.ts",
    from: "const match = typeof authorization === 'string' ? /^Bearer\\s+(\\S+)$/i.exec(authorization.trim()) : null;",
    to: "const match = typeof authorization === 'string' ? /^(?:Bearer\\s+)?(\\S+)$/i.exec(authorization.trim()) : null;",
    first: ["test/auth/tokens.test.ts"],
  },
  {
    id: "F1",
    breaks: "B1",
    area: 'fanout',
    what: "the check after the write takes a post it no longer finds as stored unchanged",
    file: "src/feed/fanout.ts",
    from: "const stored = stillStored.get(post.id.toHexString());",
    to: "const stored = stillStored.get(post.id.toHexString()) ?? toStoredBody(post.body);",
    first: ["test/feed/fanoutRaces.test.ts"],
  },
  {
    id: "F2",
    area: 'fanout',
    what: "deliveries chunked over the batch size",
    file: "src/feed/fanout.ts",
    from: "    if (size >= limit) {",
    to: "    if (size > limit) {",
    first: ["test/feed/fanoutRaces.test.ts"],
  },
  {
    id: "F3",
    area: 'fanout',
    what: "inactive readers delivered to",
    file: "src/feed/fanout.ts",
    from: "const reached = chunk.map(({ post, recipients }) => ({ post, recipients: recipients.filter((userId) => active.has(userId)) }));",
    to: "const reached = chunk.map(({ post, recipients }) => ({ post, recipients }));",
    first: ["test/feed/conformance.test.ts"],
  },
  {
    id: "F4",
    area: 'fanout',
    what: "last sub-tasks of a split never queued",
    file: "src/feed/fanout.ts",
    from: "    await run.checkpoint();\n    await this.enqueue(pending);\n  }\n\n  private async fillGap",
    to: "  }\n\n  private async fillGap",
    first: ["test/feed/fanoutRaces.test.ts"],
  },
  {
    id: "F5",
    area: 'fanout',
    what: "retraction finishing a dead request leaves the author's own entry",
    file: "src/feed/fanout.ts",
    from: "await this.backend.removeFrom([post.authorId, ...(audience ?? [])], post);",
    to: "await this.backend.removeFrom(audience ?? [], post);",
    first: ["test/feed/fanoutRaces.test.ts"],
  },
  {
    id: "F6",
    area: 'fanout',
    what: "delivery of a deleted post waits a minute",
    file: "src/feed/fanout.ts",
    from: "    if (await this.content.lookups.wasDeleted(post.id)) return;",
    to: "",
    first: ["test/feed/fanoutRaces.test.ts"],
  },
  {
    id: "F7",
    area: 'fanout',
    what: "pulled posts pushed too",
    file: "src/feed/postDelivery.ts",
    from: "await fanout.enqueueDelivery(post, postNotificationTasks(post), backend.materialized && !post.pulled);",
    to: "await fanout.enqueueDelivery(post, postNotificationTasks(post), backend.materialized);",
    first: ["test/feed/conformance.test.ts"],
  },
  {
    id: "F8",
    area: 'fanout',
    what: "retraction leaves pending deliveries queued",
    file: "src/feed/fanout.ts",
    from: "      await this.work.queue.tasks.deleteMany({ kind: 'deliver', 'payload.post.id': post.id });",
    to: "",
    first: ["test/feed/fanoutRaces.test.ts"],
  },
  {
    id: "N1",
    area: 'notifications',
    what: "a leave takes the quick path although the leaver is the newest actor shown",
    file: "src/notifications/notificationGroups.ts",
    from: "$or: [{ n: 1 }, { n: { $gt: 1 }, 'a.0.u': { $ne: actor }, $or:",
    to: "$or: [{ n: 1 }, { n: { $gt: 1 }, $or:",
    first: ["test/notifications/rules.test.ts", "test/notifications/largeGroup.test.ts"],
  },
  {
    id: "N2",
    area: 'notifications',
    what: "a leave from a group of more than 20 fills one place too few",
    file: "src/notifications/notificationGroups.ts",
    from: "const wanted = Math.min(Math.max(count, 0), maxActorsShown) - shown.length;",
    to: "const wanted = Math.min(Math.max(count, 0), maxActorsShown - 1) - shown.length;",
    first: ["test/notifications/largeGroup.test.ts"],
  },
  {
    id: "N3",
    area: 'notifications',
    what: "a leave replayed after a crash is applied again (its token is not looked for)",
    file: "src/notifications/notificationGroups.ts",
    from: "if (!current || (current.tk ?? []).includes(token)) return;",
    to: "if (!current) return;",
    first: ["test/notifications/replayedChanges.test.ts", "test/notifications/crash.test.ts"],
  },
  {
    id: "L7",
    area: 'limits',
    what: "a fragment spread a second time costs nothing (its cost is not remembered)",
    file: "src/api/requestLimits.ts",
    from: "          fragmentCosts.set(name, cost);\n",
    to: "",
    first: ["test/api/requestLimits.test.ts"],
  },
  {
    id: "L8",
    area: 'limits',
    what: "a page size above the maximum is priced as asked, not as the page the server returns",
    file: "src/api/requestLimits.ts",
    from: "Math.min(raw, maxPageSize)",
    to: "raw",
    first: ["test/api/requestLimits.test.ts"],
  },
];

/** Applies `mutant`, runs `files`, restores the source; the tests that failed. */
function failuresWith(mutant, files) {
  const original = readFileSync(mutant.file, 'utf8');
  const at = original.indexOf(mutant.from);
  if (at < 0 || original.indexOf(mutant.from, at + 1) >= 0) throw new Error(`${mutant.id}: the text to change must occur exactly once in ${mutant.file}`);
  const report = join(tmpdir(), `mutant-${process.pid}-${mutant.id}.json`);
  const restore = () => writeFileSync(mutant.file, original);
  const interrupted = () => {
    restore();
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  writeFileSync(mutant.file, original.slice(0, at) + mutant.to + original.slice(at + mutant.from.length));
  try {
    spawnSync('npx', ['vitest', 'run', ...files, '--reporter=json', `--outputFile=${report}`], { stdio: 'ignore', timeout: 20 * 60_000 });
  } finally {
    restore();
    process.removeListener('SIGINT', interrupted);
  }
  try {
    const results = JSON.parse(readFileSync(report, 'utf8'));
    rmSync(report);
    const relative = (name) => name.replace(`${process.cwd()}/`, '');
    return results.testResults.flatMap((file) =>
      file.assertionResults.length === 0 && file.status === 'failed'
        ? [`${relative(file.name)} (did not load)`]
        : file.assertionResults.filter((test) => test.status === 'failed').map((test) => `${relative(file.name)} > ${test.fullName}`),
    );
  } catch {
    return ['(no report: the run itself failed)'];
  }
}

function run(mutant) {
  const started = Date.now();
  let killedBy = failuresWith(mutant, mutant.first);
  let ranWide = false;
  if (killedBy.length === 0) {
    ranWide = true;
    killedBy = failuresWith(mutant, [...new Set([...mutant.first, ...areas[mutant.area]])]);
  }
  return { id: mutant.id, breaks: mutant.breaks ?? null, what: mutant.what, file: mutant.file, killed: killedBy.length > 0, ranWide, seconds: Math.round((Date.now() - started) / 1000), killedBy };
}

const args = process.argv.slice(2);
// Run only as a program: importing the list (to read it) must not start mutating sources.
if (process.argv[1] !== fileURLToPath(import.meta.url)) {
  // imported
} else if (args.includes('--list')) {
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
    writeFileSync('mutation-sample.json', `${JSON.stringify(results, null, 2)}\n`);
  }
  const killed = results.filter((result) => result.killed).length;
  console.log(`killed ${killed} of ${results.length} (${Math.round((100 * killed) / results.length)} %)`);
}
