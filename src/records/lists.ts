/**
 * Lists as every layer sees them: the stored list document, the public record, and the name rules.
 * Types and pure functions only: no service, no I/O. Who is in a list is kept on the owner's
 * `following` edges (`EdgeDocument._g`), not here.
 */
import { ObjectId } from 'mongodb';

export interface ListDocument {
  _id: ObjectId;
  /** The owner's handle. */
  _o: string;
  /**
   * Which of the owner's `maxListsPerOwner` places the list takes; unique per owner, so racing
   * creations can never pass the limit.
   */
  s: number;
  /** The name. */
  n: string;
  createdAt: Date;
  /** Set when the list is being deleted: from then on it is gone for every read and write. */
  deletingAt?: Date;
}

export interface ListRecord {
  id: ObjectId;
  ownerId: string;
  name: string;
  createdAt: Date;
}

export const maxListsPerOwner = 50;
export const maxListNameLength = 50;

export const toListRecord = (doc: ListDocument): ListRecord => ({ id: doc._id, ownerId: doc._o, name: doc.n, createdAt: doc.createdAt });

/** A list id as clients send it; null when it cannot be one. */
export function parseListId(id: string): ObjectId | null {
  return /^[0-9a-f]{24}$/i.test(id) ? new ObjectId(id) : null;
}
