import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertDisplayableText, postText } from '../../src/content/text.js';
import { startTestApp, type TestApp } from '../support/testApp.js';

/**
 * The text rules themselves, whoever calls them: a post that would show nothing is refused, however
 * it is made of characters that take no room (zero-width spaces and joiners, fillers, invisible
 * operators) and blanks that trimming leaves inside.
 */
describe('post text that shows nothing', () => {
  it.each([
    ['a zero-width space', '\u200b'],
    ['zero-width spaces around a blank', '\u200b \u200b'],
    ['a zero-width joiner and non-joiner', '\u200d\u200c'],
    ['a word joiner and an invisible plus', '\u2060\u2064'],
    ['a Hangul filler', '\u3164'],
    ['a Hangul filler between zero-width spaces', '\u200b\u3164\u200b'],
    ['a soft hyphen and a combining grapheme joiner', '\u00ad\u034f'],
    ['a variation selector alone', '\ufe0f'],
    ['an ideographic space and no-break spaces inside zero-width spaces', '\u200b\u3000\u00a0\u202f\u200b'],
    ['blank lines and tabs inside zero-width spaces', '\u200b\n\t\n\u200b'],
  ])('refuses %s', (_case, text) => {
    expect(() => postText(text)).toThrow(/not all of them blank/);
  });

  it.each([
    ['a letter between zero-width spaces', '\u200bx\u200b', '\u200bx\u200b'],
    ['a heart with its variation selector', '❤\ufe0f', '❤\ufe0f'],
    ['a family joined by zero-width joiners', '👨\u200d👩\u200d👧', '👨\u200d👩\u200d👧'],
    ['text with a soft hyphen', ' hyphen\u00adated ', 'hyphen\u00adated'],
  ])('keeps %s, only trimmed of blanks at its ends', (_case, text, stored) => {
    expect(postText(text)).toBe(stored);
  });
});

/**
 * Names, bios, list names and keyword filters are checked by the same rules as posts, however
 * short: a few letters can carry hundreds of stacked marks, which every page that shows them draws.
 */
describe('display text with marks stacked on one character', () => {
  const check = (text: string) => assertDisplayableText(text, 'Display name', { multiline: false });

  it.each([
    ['one letter with forty marks', `e${'\u0301'.repeat(40)}`],
    ['a short name ending in a letter with thirty-two marks', `Ada e${'\u0301'.repeat(32)}`],
  ])('refuses %s', (_case, text) => {
    expect(() => check(text)).toThrow(/must not stack more than 32 code units/);
  });

  it('takes a letter with a few marks and the longest emoji sequences', () => {
    expect(() => check(`Zoe${'\u0301'.repeat(31)}`)).not.toThrow();
    expect(() => check('👩🏻‍❤️‍💋‍👨🏼 and 👨‍👩‍👧')).not.toThrow();
  });
});

/** Text is counted as people see it, and refused rather than rewritten when it would not show as sent. */
describe('text people see', () => {
  let app: TestApp;
  let token: string;
  const codeOf = (result: { errors?: { extensions?: { code?: string } }[] }) => result.errors?.[0]?.extensions?.code;
  const post = (text: string) => app.gql('mutation($t: String!) { createPost(text: $t) { text } }', { t: text }, token);

  beforeAll(async () => {
    app = await startTestApp();
    token = await app.signUp('writer');
  });
  afterAll(() => app?.stop());

  it('counts 500 emoji as 500 characters, and 501 as too many', async () => {
    const family = '👨‍👩‍👧'; // one character on screen, 8 UTF-16 units
    expect((await post('🎉'.repeat(500))).data.createPost.text).toBe('🎉'.repeat(500));
    expect((await post(family.repeat(500))).errors).toBeUndefined();
    expect(codeOf(await post('🎉'.repeat(501)))).toBe('BAD_USER_INPUT');
  });

  it('takes the longest emoji sequences, and a few marks on a letter, as one character each', async () => {
    const kiss = '👩🏻‍❤️‍💋‍👨🏼'; // two people with two skin tones: 15 UTF-16 units
    expect((await post(kiss.repeat(3))).data.createPost.text).toBe(kiss.repeat(3));
    expect((await post('Z̤͔ͧ̑a̴͔l̼g͓o')).data.createPost.text).toBe('Z̤͔ͧ̑a̴͔l̼g͓o');
  });

  it('keeps line breaks and tabs in posts and stores them as sent', async () => {
    expect((await post('two\nlines\tand a tab')).data.createPost.text).toBe('two\nlines\tand a tab');
  });

  it.each([
    ['a NUL', 'nul\u0000byte'],
    ['an escape character', 'colour \u001b[31mred'],
    ['a right-to-left override', 'invoice\u202Efdp.exe'],
    ['a bidi isolate', 'abc\u2066def'],
    ['half of a surrogate pair', 'broken \ud800 pair'],
    ['forty marks stacked on one letter', `ze${'\u0301'.repeat(40)}lgo`],
  ])('refuses a post with %s, storing nothing', async (_case, text) => {
    expect(codeOf(await post(text))).toBe('BAD_USER_INPUT');
    expect(await app.database.db.collection('content').countDocuments({ _m: text })).toBe(0);
  });

  it('refuses half of a surrogate pair in a display name, which no stored string could hold', async () => {
    const named = await app.gql('mutation($d: String!) { updateProfile(displayName: $d) { displayName } }', { d: 'Ada \udc00' }, token);
    expect(codeOf(named)).toBe('BAD_USER_INPUT');
  });

  it('refuses control characters and overrides in display names, and counts names in characters', async () => {
    const signUp = (handle: string, displayName: string) =>
      app.gql('mutation($h: String!, $d: String) { signUp(handle: $h, password: "long enough", displayName: $d) { user { displayName } } }', { h: handle, d: displayName });
    expect(codeOf(await signUp('named_one', 'Eve\u202Eevil'))).toBe('BAD_USER_INPUT');
    expect(codeOf(await signUp('named_two', 'two\nlines'))).toBe('BAD_USER_INPUT');
    expect(await app.database.db.collection('users').countDocuments({ _id: { $in: ['named_one', 'named_two'] } as never })).toBe(0);
    expect((await signUp('named_three', '😀'.repeat(50))).data.signUp.user.displayName).toBe('😀'.repeat(50));
    expect(codeOf(await signUp('named_four', '😀'.repeat(51)))).toBe('BAD_USER_INPUT');
  });
});
