import { badInput } from '../errors.js';

/** At most this many tags are kept of one post: the rest of its `#words` are plain text. */
export const maxTagsPerPost = 10;

/** A tag longer than this is not one (Mastodon's limit is about as long). */
export const maxTagLength = 100;

// `#` not after a letter, digit, mark, `_`, `#` or `&` (so `a#b`, `##x` and `&#39;` tag nothing),
// nor inside a URL (`https://x.org/#anchor`: the `#` follows `/`); the tag runs over letters,
// digits, marks and `_` in any script, and must hold one letter, mark or non-ASCII digit (`#1` is
// a number, not a tag).
const tagPattern = /(?<![\p{L}\p{M}\p{N}_#&/])#([\p{L}\p{M}\p{N}_]+)/gu;
const urlPattern = /\bhttps?:\/\/\S+/giu;
const notOnlyDigits = /[^\p{Nd}_]/u;

/** A tag as stored and compared: NFKC, lower case (`#CAFÉ`, `#café` and `#Café` are one tag). */
export const normalTag = (tag: string): string => tag.normalize('NFKC').toLowerCase();

/**
 * The tags a text holds, normalised, each once, in order of first appearance, at most
 * `maxTagsPerPost`. Parsed once when a post's body is made (like its mentions), so reading and
 * indexing a post never parse it again. Thousands of `#` cost one linear pass: the pattern has no
 * nested repetition.
 */
export function postTags(text: string): string[] {
  if (!text.includes('#')) return [];
  const tags = new Set<string>();
  // A URL's fragment is not a tag: URLs are blanked out first, keeping the other positions.
  const withoutUrls = text.includes('://') ? text.replace(urlPattern, (url) => ' '.repeat(url.length)) : text;
  for (const match of withoutUrls.matchAll(tagPattern)) {
    const tag = normalTag(match[1]!);
    if (tag.length > maxTagLength || !notOnlyDigits.test(tag)) continue;
    tags.add(tag);
    if (tags.size === maxTagsPerPost) break;
  }
  return [...tags];
}

const wholeTag = /^[\p{L}\p{M}\p{N}_]+$/u;

/**
 * A tag as a client names it (`followTag`, `tagTimeline`): with or without its `#`, normalised
 * like a post's; anything that no post could tag is refused.
 */
export function requestedTag(input: string): string {
  const tag = normalTag(input.trim().replace(/^#/, ''));
  if (tag === '' || tag.length > maxTagLength || !wholeTag.test(tag) || !notOnlyDigits.test(tag)) {
    throw badInput(`A tag is 1 to ${maxTagLength} letters, digits, marks or _, not only digits (a leading # is fine)`);
  }
  return tag;
}
