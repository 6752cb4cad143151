import { badInput } from '../errors.js';

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** Length as a person counts it: an emoji, a flag or a letter with its accents is one. */
export function graphemeLength(text: string): number {
  let count = 0;
  for (const _ of graphemes.segment(text)) count++;
  return count;
}

// C0 and C1 controls (line breaks and tabs allowed only where text may span lines), and the
// bidirectional embeddings, overrides and isolates that make text read differently than it is stored.
const controls = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/u;
const lineBreaks = /[\u0009\u000A\u000D]/u;
const bidiControls = /[\u202A-\u202E\u2066-\u2069]/u;

/**
 * Refuses text that would not show as sent: control characters, and bidirectional overrides. The
 * text is never rewritten to pass.
 */
export function assertDisplayableText(text: string, what: string, options: { multiline: boolean }): void {
  if (controls.test(text) || (!options.multiline && lineBreaks.test(text))) {
    throw badInput(`${what} must not contain control characters${options.multiline ? ' (line breaks and tabs are fine)' : ''}`);
  }
  if (bidiControls.test(text)) throw badInput(`${what} must not contain bidirectional override characters`);
}
