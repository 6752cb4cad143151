import { assertDisplayableText, graphemeLength } from '../content/text.js';
import { badInput } from '../errors.js';
import { maxBioLength, maxDisplayNameLength } from '../records/users.js';

/** A display name as stored: trimmed, null when blank; one line, at most 50 graphemes. */
export function displayNameOrNull(input: string): string | null {
  const displayName = input.trim() || null;
  if (displayName) {
    if (graphemeLength(displayName) > maxDisplayNameLength) {
      throw badInput(`Display name must be at most ${maxDisplayNameLength} characters`);
    }
    assertDisplayableText(displayName, 'Display name', { multiline: false });
  }
  return displayName;
}

/** A bio as stored: trimmed, null when blank; the text rules of posts, at most 300 graphemes. */
export function bioOrNull(input: string): string | null {
  const bio = input.trim() || null;
  if (bio) {
    if (graphemeLength(bio) > maxBioLength) throw badInput(`Bio must be at most ${maxBioLength} characters`);
    assertDisplayableText(bio, 'Bio', { multiline: true });
  }
  return bio;
}
