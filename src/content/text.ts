import { badInput } from '../errors.js';
import { maxPostLength } from '../records/posts.js';

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** Length as a person counts it (an emoji, a flag or a letter with its accents is one), and the most UTF-16 code units one of them takes. */
function measure(text: string): { length: number; longest: number } {
  let length = 0;
  let longest = 0;
  for (const { segment } of graphemes.segment(text)) {
    length++;
    longest = Math.max(longest, segment.length);
  }
  return { length, longest };
}

/** Length as a person counts it: an emoji, a flag or a letter with its accents is one. */
export function graphemeLength(text: string): number {
  return measure(text).length;
}

// C0 and C1 controls (line breaks and tabs allowed only where text may span lines), and the
// bidirectional embeddings, overrides and isolates that make text read differently than it is stored.
const controls = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/u;
const lineBreaks = /[\u0009\u000A\u000D]/u;
const bidiControls = /[\u202A-\u202E\u2066-\u2069]/u;

// Half of a UTF-16 surrogate pair on its own: no UTF-8 (and so no BSON string) can hold it.
const loneSurrogate = /\p{Cs}/u;

/**
 * UTF-16 code units one character may take: the longest emoji sequences (a kiss with two skin
 * tones, a subdivision flag) take 15, while marks stacked on one letter would let a text within
 * its character limit grow without bound, in every timeline that embeds it.
 */
const maxCharacterUnits = 32;

/**
 * Refuses text that would not show or be stored as sent: control characters, bidirectional
 * overrides, lone surrogates, and characters made of more marks than any script needs. The text
 * is never rewritten to pass.
 */
export function assertDisplayableText(text: string, what: string, options: { multiline: boolean }): void {
  assertShowable(text, what, options);
  // No character can be longer than the whole text: short texts need no segmenting.
  if (text.length > maxCharacterUnits) assertCharacterUnits(measure(text).longest, what);
}

/** Every rule of assertDisplayableText but the length of one character, which needs the text segmented. */
function assertShowable(text: string, what: string, options: { multiline: boolean }): void {
  if (controls.test(text) || (!options.multiline && lineBreaks.test(text))) {
    throw badInput(`${what} must not contain control characters${options.multiline ? ' (line breaks and tabs are fine)' : ''}`);
  }
  if (bidiControls.test(text)) throw badInput(`${what} must not contain bidirectional override characters`);
  if (loneSurrogate.test(text)) throw badInput(`${what} must be valid Unicode: it holds half of a surrogate pair`);
}

function assertCharacterUnits(longest: number, what: string): void {
  if (longest > maxCharacterUnits) throw badInput(`${what} must not stack more than ${maxCharacterUnits} code units of marks on one character`);
}

// Spaces and characters that show nothing (zero-width spaces, fillers): a text of only these is blank.
const visibleCharacter = /[^\p{White_Space}\p{Default_Ignorable_Code_Point}]/u;

/**
 * The text a post stores: trimmed, 1 to 500 characters of which at least one shows, and
 * displayable, with the text segmented once. Checked before anything is written or counted
 * against a limit.
 */
export function postText(text: string, { mayBeEmpty = false } = {}): string {
  const message = text.trim();
  if (message === '' && mayBeEmpty) return message;
  const { length, longest } = measure(message);
  if (length < 1 || length > maxPostLength || !visibleCharacter.test(message)) {
    throw badInput(`Post text must be 1 to ${maxPostLength} characters after trimming, not all of them blank`);
  }
  assertShowable(message, 'Post text', { multiline: true });
  assertCharacterUnits(longest, 'Post text');
  return message;
}
