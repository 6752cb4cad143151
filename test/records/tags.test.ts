import { describe, expect, it } from 'vitest';
import { editedBody, newBody, textUpdate } from '../../src/records/posts.js';
import { maxTagsPerPost, postTags, requestedTag } from '../../src/records/tags.js';
import { searchQuery, searchTokens, textMatches } from '../../src/records/searchTokens.js';

describe('tags in a post', () => {
  it('are # and letters, digits, marks or _ in any script, normalised, each once, in order', () => {
    expect(postTags('#café and #CAFÉ, #日本語 at #東京2026! #snake_case #Cafe\u0301')).toEqual(['café', '日本語', '東京2026', 'snake_case']);
    expect(postTags('#한국어 #русский #ÅNGSTRÖM')).toEqual(['한국어', 'русский', 'ångström']);
  });

  it('are not inside a URL, after a letter, a number alone, or an HTML entity', () => {
    expect(postTags('see https://example.org/page#section and a#b, c##d, #1 and &#39; but #ok')).toEqual(['ok']);
  });

  it('keep the first ten; thousands of # cost a linear pass', () => {
    const many = Array.from({ length: 30 }, (_, i) => `#t${i}`).join(' ');
    expect(postTags(many)).toHaveLength(maxTagsPerPost);
    const hostile = '#'.repeat(100_000) + 'a' + ' #'.repeat(50_000);
    const started = performance.now();
    expect(postTags(hostile)).toEqual([]);
    // A linear pass takes milliseconds; a quadratic one over 250,000 characters, tens of billions of steps. The bound
    // sits far from both, so a loaded machine cannot break it.
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('are parsed once into the body, and an edit of the text puts new tags and tokens into the post', () => {
    expect(newBody('#Hello world').tags).toEqual(['hello']);
    expect(newBody('no tags').tags).toEqual([]);
    const edit = (text: string) => textUpdate(editedBody(newBody('first about #Osaka'), text, new Date()), true);
    expect(edit('now about #Tokyo').$set).toMatchObject({ _m: 'now about #Tokyo', _tg: ['tokyo'], _w: ['now', 'about', 'tokyo', '#tokyo'] });
    expect(edit('plain').$unset).toMatchObject({ _tg: '' });
    expect(edit('!!!').$unset).toMatchObject({ _w: '' });
    // A repost's copy takes the text and its tags, never the search tokens.
    expect(textUpdate(editedBody(newBody('x'), 'now #Tokyo', new Date()), false).$set).not.toHaveProperty('_w');
  });

  it('as a client names them: a leading # is dropped, what no post could tag is refused', () => {
    expect(requestedTag('#CAFÉ')).toBe('café');
    expect(requestedTag(' 日本語 ')).toBe('日本語');
    for (const bad of ['', '#', 'a b', '123', 'x'.repeat(101), 'a\u0000b', '\ud800x']) expect(() => requestedTag(bad)).toThrow(/tag/);
  });
});

describe('search tokens', () => {
  it('are accent- and case-free words, CJK pairs and #tags', () => {
    expect(searchTokens('Café CAFE naïve', [])).toEqual(['cafe', 'naive']);
    expect(searchTokens('缓存体系', ['缓存'])).toEqual(['缓存', '存体', '体系', '#缓存']);
    // Hangul syllables stay whole (NFKD would split them into jamo).
    expect(searchTokens('한국어', [])).toEqual(['한국', '국어']);
    expect(searchTokens('社交feed场景', [])).toEqual(['社交', 'feed', '场景']);
  });

  it('find any run of two or more CJK characters, and every word of the query', () => {
    const text = '如何为社交feed场景设计缓存体系';
    for (const query of ['缓存', '缓存体系', '社交', '社交 feed', 'FEED', '设计缓存']) expect(textMatches(text, searchQuery(query)!), query).toBe(true);
    // Each pair occurs, but not as one run.
    expect(textMatches('缓存和存体', searchQuery('缓存体')!)).toBe(false);
    expect(textMatches('Un café noir', searchQuery('cafe noir')!)).toBe(true);
    expect(textMatches('Un café noir', searchQuery('cafe blanc')!)).toBe(false);
  });

  it('a query of only punctuation holds no word', () => {
    expect(searchQuery('!!! ...')).toBeNull();
  });
});
