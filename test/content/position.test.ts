import { ObjectId } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { newBody } from '../../src/records/posts.js';
import { compareNewestFirst, decodeCursor, encodeCursor } from '../../src/content/position.js';
import { nearestBeyond } from '../../src/feed/entries.js';
import type { TimelineEntry } from '../../src/feed/timelineEntry.js';

const at = new Date('2026-11-25T10:00:00.000Z');
const entry = (hex: string, text: string, createdAt = at): TimelineEntry => ({
  id: new ObjectId(hex),
  authorId: 'alice',
  createdAt,
  replyTo: null,
  repostOf: null,
  body: newBody(text),
});

describe('the order of posts in every timeline', () => {
  it('orders posts of the same millisecond by id, newest id first, as their hex ids sort', () => {
    const hexes = ['0000000000000000000000ff', 'a00000000000000000000000', '9fffffffffffffffffffffff', '0000000000000000000000f0', 'ff0000000000000000000001'];
    const sorted = hexes.map((hex) => entry(hex, hex)).sort(compareNewestFirst).map((post) => post.id.toHexString());
    expect(sorted).toEqual([...hexes].sort().reverse());
  });

  it('keeps one copy of a post that two sources return, the later source’s, in order around the boundary', () => {
    const older = entry('0000000000000000000000a1', 'older', new Date(at.getTime() - 1000));
    const fromCache = entry('0000000000000000000000b2', 'from the cache');
    const fromContent = entry('0000000000000000000000b2', 'from content');
    const newer = entry('0000000000000000000000c3', 'newer', new Date(at.getTime() + 1000));
    const page = nearestBeyond([newer, fromCache, older, fromContent], { direction: 'older', from: null, limit: 10 });
    expect(page.map((post) => post.body?.text)).toEqual(['newer', 'from content', 'older']);
    const refresh = nearestBeyond([newer, fromCache, older, fromContent], { direction: 'newer', from: older, limit: 10 });
    expect(refresh.map((post) => post.body?.text)).toEqual(['from content', 'newer']);
  });

  it('gives cursors that decode to the position they were made from', () => {
    const post = entry('65a1b2c3d4e5f60718293a4b', 'x');
    const decoded = decodeCursor(encodeCursor(post));
    expect(decoded.createdAt.getTime()).toBe(at.getTime());
    expect(decoded.id.toHexString()).toBe('65a1b2c3d4e5f60718293a4b');
    expect(encodeCursor(post)).toBe(Buffer.from(`${at.getTime()}:65a1b2c3d4e5f60718293a4b`).toString('base64url'));
  });
});
