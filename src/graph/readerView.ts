/**
 * A reader's filters as data and rules: the stored document, the view that pages and live events
 * apply, and the keyword pattern. No I/O, so the API's loaders and the feed's rules import this
 * rather than the service that stores the filters.
 */
import type { ObjectId } from 'mongodb';

export interface KeywordFilterRecord {
  id: string;
  phrase: string;
}

/**
 * What one reader hides, in one document read once per timeline page: whom they mute, whom they
 * block, who blocks them, and their keyword filters. A block is written on both users' documents
 * (`blocked` on the blocker, `blockedBy` on the other), so each side's pages need only their own.
 */
export interface ReaderFiltersDocument {
  /** The reader's handle. */
  _id: string;
  muted?: string[];
  blocked?: string[];
  blockedBy?: string[];
  /** `key`: the phrase in lower case, so one phrase is kept once whatever its case. */
  keywords?: { _id: ObjectId; phrase: string; key: string }[];
}

/** A reader's filters, ready to apply to timeline entries and live events. */
export class ReaderView {
  readonly muted: ReadonlySet<string>;
  readonly blocked: ReadonlySet<string>;
  readonly blockedBy: ReadonlySet<string>;
  /** Muted, blocked, or blocking the reader: none of their posts or reposts show. */
  private readonly hidden: ReadonlySet<string>;
  private readonly keywords: RegExp | null;

  constructor(doc: ReaderFiltersDocument | null) {
    this.muted = new Set(doc?.muted ?? []);
    this.blocked = new Set(doc?.blocked ?? []);
    this.blockedBy = new Set(doc?.blockedBy ?? []);
    this.hidden = new Set([...this.muted, ...this.blocked, ...this.blockedBy]);
    this.keywords = keywordPattern((doc?.keywords ?? []).map((keyword) => keyword.phrase));
  }

  hides(handle: string): boolean {
    return this.hidden.has(handle);
  }

  isBlockedEitherWay(handle: string): boolean {
    return this.blocked.has(handle) || this.blockedBy.has(handle);
  }

  matchesKeyword(text: string): boolean {
    return this.keywords !== null && this.keywords.test(text);
  }
}

/**
 * Whole words, case-insensitive, in any script: a phrase matches where it is not part of a longer
 * word, and any run of spaces in it matches any run of white space in the post.
 */
export function keywordPattern(phrases: readonly string[]): RegExp | null {
  if (phrases.length === 0) return null;
  const alternatives = phrases.map((phrase) =>
    phrase.split(/\s+/u).map((word) => word.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&')).join('\\s+'),
  );
  return new RegExp(`(?<![\\p{L}\\p{N}\\p{M}_])(?:${alternatives.join('|')})(?![\\p{L}\\p{N}\\p{M}_])`, 'iu');
}
