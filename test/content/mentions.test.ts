import { describe, expect, it } from 'vitest';
import { maxMentionsPerPost, mentionedHandles } from '../../src/records/mentions.js';

describe('mentionedHandles', () => {
  it('finds each @handle once, lowercased, in order', () => {
    expect(mentionedHandles('@Bob hi @alice, and @bob again (@carol_9).')).toEqual(['bob', 'alice', 'carol_9']);
  });

  it('ignores addresses, doubled @ and handles outside the handle rules', () => {
    expect(mentionedHandles('mail a@bob.com or @@carol, @ab is too short, @' + 'x'.repeat(31) + ' too long')).toEqual([]);
  });

  it('stops at handle characters and accepts punctuation after them', () => {
    expect(mentionedHandles("@alice's cat met @dave.\n@erin!")).toEqual(['alice', 'dave', 'erin']);
  });

  it('mentions at most the first twenty accounts', () => {
    const text = Array.from({ length: 30 }, (_, i) => `@user${i}`).join(' ');
    const handles = mentionedHandles(text);
    expect(handles).toHaveLength(maxMentionsPerPost);
    expect(handles[0]).toBe('user0');
    expect(handles.at(-1)).toBe('user19');
  });
});
