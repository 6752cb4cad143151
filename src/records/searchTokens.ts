/**
 * The words a post is found by (`searchPosts`), as a token index of our own rather than MongoDB's
 * `$text`: the embedded database has no text index, and `$text` splits on spaces, so it could not
 * find a run of Chinese, Japanese or Korean text inside a sentence that has none. Tokens are
 * stored on the post's own document (`_w`), so indexing a post costs no command of its own.
 *
 * - Latin and every other script with spaces: words of letters and digits, NFKD-decomposed, marks
 *   dropped and lower-cased (`Café` and `CAFE` are `cafe`).
 * - Han, Hiragana, Katakana and Hangul (no spaces): each run of them as its overlapping pairs of
 *   characters, NFKC and never decomposed (a Hangul syllable stays one), so any run of two or
 *   more characters of the text is found by its pairs, which the page then checks are adjacent.
 *   A lone character between other text is a token of its own.
 * - Tags: `#` and the tag, which no word can be (`#` separates words).
 */

const cjk = '\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Hangul}';
// A run of CJK characters, or a word of other letters, marks and digits.
const runPattern = new RegExp(`([${cjk}]+)|((?:(?![${cjk}])[\\p{L}\\p{M}\\p{N}])+)`, 'gu');
const marks = /\p{M}/gu;

/** Longer words are cut here, in posts and queries alike, so they still match. */
const maxWordLength = 40;
/** At most this many tokens per post: a 500-character post of pairs and words stays below it. */
export const maxTokensPerPost = 600;
/** A query's tokens asked of the index; the rest are checked on the posts it returns. */
const maxIndexedTerms = 8;

interface Analysed {
  tokens: string[];
  /** The CJK runs of three characters or more: their pairs match anywhere, so adjacency is checked on the text. */
  runs: string[];
}

function analyse(text: string): Analysed {
  const tokens = new Set<string>();
  const runs: string[] = [];
  for (const match of text.normalize('NFKC').toLowerCase().matchAll(runPattern)) {
    if (match[1] !== undefined) {
      const characters = [...match[1]];
      if (characters.length === 1) tokens.add(characters[0]!);
      for (let i = 0; i + 1 < characters.length; i++) tokens.add(characters[i]! + characters[i + 1]!);
      if (characters.length > 2) runs.push(match[1]);
    } else {
      const word = [...match[2]!.normalize('NFKD').replace(marks, '')].slice(0, maxWordLength).join('');
      if (word !== '') tokens.add(word);
    }
  }
  return { tokens: [...tokens], runs };
}

/** The tokens `_w` stores for a post's text and tags. */
export function searchTokens(text: string, tags: readonly string[]): string[] {
  const tokens = analyse(text).tokens.slice(0, maxTokensPerPost);
  for (const tag of tags) tokens.push(tagToken(tag));
  return tokens;
}

/** The token of a tag in `_w`. */
export const tagToken = (tag: string): string => `#${tag}`;

/** A parsed query: what the index is asked for, and what every post found must also satisfy. */
export interface SearchQuery {
  /** At most a few tokens for `$all`; never empty. */
  indexed: string[];
  /** Every token of the query. */
  tokens: string[];
  runs: string[];
}

/** The query's terms; null when it holds no word (only spaces and punctuation). */
export function searchQuery(query: string): SearchQuery | null {
  const { tokens, runs } = analyse(query);
  if (tokens.length === 0) return null;
  // Longest first: a long word or a pair is likelier to be rare, so the index walks fewer posts.
  const indexed = [...tokens].sort((a, b) => b.length - a.length).slice(0, maxIndexedTerms);
  return { indexed, tokens, runs };
}

/** Whether a post's text holds every word of the query, and each CJK run of it in one piece. */
export function textMatches(text: string, query: SearchQuery): boolean {
  const { tokens } = analyse(text);
  const held = new Set(tokens);
  if (!query.tokens.every((token) => held.has(token))) return false;
  if (query.runs.length === 0) return true;
  const normal = text.normalize('NFKC').toLowerCase();
  return query.runs.every((run) => normal.includes(run));
}
