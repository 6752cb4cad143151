/**
 * The timeline pages the benchmarks and the read-path tests ask for: the plain page every earlier
 * figure measured (each post's id, text, time and author), and the page people load, which is the
 * reference web client's own query (its counts, the viewer's likes, reposts and bookmarks,
 * display names, mentions, the post a reply answers and who reposted it).
 */
import { print } from 'graphql';
import { TIMELINE } from '../examples/web/src/operations.js';

export const plainTimelinePage = 'query Plain($first: Int) { timeline(first: $first) { edges { cursor node { id text createdAt author { handle displayName } } } pageInfo { hasNextPage endCursor } } }';

export const fullTimelinePage = print(TIMELINE);
