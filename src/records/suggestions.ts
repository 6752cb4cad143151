/** An account suggested to follow, as the graph answers it and the API shows it. */
export interface SuggestionRecord {
  userId: string;
  /** How many of the viewer's followees follow the account. */
  mutualCount: number;
  /** Up to `maxFollowedBy` of the viewer's followees who follow the account, in handle order. */
  followedBy: string[];
}

/** Followees named per suggestion. */
export const maxFollowedBy = 100;
