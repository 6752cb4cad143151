import type { Collection, Document, Filter } from 'mongodb';
import { plannedIndexes } from '../db/shardPlan.js';
import { publicOnly, tokensLeftOut, toPostRecord, type ContentDocument, type PostRecord } from '../records/posts.js';
import { tagToken, type SearchQuery } from '../records/searchTokens.js';
import { beyondFilter, newestFirstPage, sortFor, type Page, type PageRequest } from './position.js';

/** The index every discovery query walks: each token of each post, newest first (docs/discovery.md). */
export const discoveryIndex = 'discovery_newest_first';

/**
 * Posts by what they say: a tag's public posts, the posts of the tags a reader follows, and the
 * posts holding every word of a search. One query per page, each an equality (or `$in`) on one
 * token of the multikey index `{ _w, _d: -1, _id: -1 }`, which then gives the page's order with
 * no sort. The query document keeps the token at the top level (`_w: token`), the shape the
 * planner (and the embedded database's index lookups) narrow by.
 */
export class DiscoveryScans {
  constructor(private readonly content: Collection<ContentDocument>) {}

  async ensureIndexes(): Promise<void> {
    await plannedIndexes(this.content, [{ key: { _w: 1, _d: -1, _id: -1 }, name: discoveryIndex, partialFilterExpression: { _w: { $exists: true } } }]);
  }

  /** Public posts with any of these tags, newest first around a point. */
  tagPage(tags: readonly string[], request: PageRequest): Promise<Page<PostRecord>> {
    if (tags.length === 0) return Promise.resolve({ items: [], hasMore: false });
    const tokens = tags.map(tagToken);
    return this.find(this.tagFilter(tokens, request), request);
  }

  /** The filter of `tagPage`, for tests and the documented plan. */
  tagFilter(tokens: readonly string[], request: PageRequest): Filter<ContentDocument> {
    const selection: Filter<ContentDocument> = { _w: tokens.length === 1 ? tokens[0]! : { $in: [...tokens] }, ...publicOnly };
    return withBeyond(selection, request);
  }

  /**
   * Posts holding the query's indexed tokens that pass `visible`, newest first around a point. The
   * caller checks the rest of the query on the text (`textMatches`).
   */
  searchPage(query: SearchQuery, visible: Filter<ContentDocument>, request: PageRequest): Promise<Page<PostRecord>> {
    return this.find(this.searchFilter(query, visible, request), request);
  }

  searchFilter(query: SearchQuery, visible: Filter<ContentDocument>, request: PageRequest): Filter<ContentDocument> {
    const [first, ...rest] = query.indexed;
    const parts: Filter<ContentDocument>[] = [visible];
    if (rest.length > 0) parts.push({ _w: { $all: rest } });
    const beyond = beyondFilter<ContentDocument>(request.direction, request.from, '_d', '_id');
    if (beyond.$or) parts.push(beyond);
    return { _w: first!, $and: parts };
  }

  private async find(filter: Filter<ContentDocument>, request: PageRequest): Promise<Page<PostRecord>> {
    const docs = await this.content
      .find(filter, { projection: tokensLeftOut, hint: discoveryIndex })
      .sort(sortFor(request.direction, '_d', '_id'))
      .limit(request.limit + 1)
      .toArray();
    return newestFirstPage(docs.map(toPostRecord), request);
  }
}

function withBeyond(selection: Filter<ContentDocument>, request: PageRequest): Filter<ContentDocument> {
  const beyond = beyondFilter<ContentDocument>(request.direction, request.from, '_d', '_id') as Document;
  return beyond.$or ? { ...selection, $and: [beyond] } : selection;
}
