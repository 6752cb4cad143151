import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';

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
