import { handlePattern } from './users.js';

/** At most this many accounts are mentioned by one post: the rest of the text's `@handle`s are plain text. */
export const maxMentionsPerPost = 20;

// `@` not preceded by a handle character or another `@`, so `a@b.com` and `@@x` mention no one;
// the handle ends where handle characters do, so `@alice's` and `@alice.` mention alice.
const mentionPattern = /(?<![a-z0-9_@])@([a-z0-9_]+)(?![a-z0-9_@])/gi;

/**
 * The handles a text mentions, lowercased, each once, in order of first appearance. Whether an
 * account has the handle is the caller's question: a mention of no account is plain text.
 */
export function mentionedHandles(text: string): string[] {
  const handles = new Set<string>();
  for (const match of text.matchAll(mentionPattern)) {
    const handle = match[1]!.toLowerCase();
    if (!handlePattern.test(handle)) continue;
    handles.add(handle);
    if (handles.size === maxMentionsPerPost) break;
  }
  return [...handles];
}
