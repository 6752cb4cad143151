import type { Services } from '../services.js';

/**
 * What resolvers and loaders reach through the context: the services by purpose, never the
 * database, the queue or the change bus.
 */
export type ApiServices = Pick<
  Services,
  'accounts' | 'users' | 'graph' | 'content' | 'timelines' | 'publishing' | 'visibility' | 'relations' | 'lists' | 'suggestions' | 'live' | 'notifications' | 'profiles' | 'settings' | 'bookmarks' | 'markers' | 'media' | 'postEdits'
  | 'followRequests' | 'staff' | 'reports' | 'suspensions' | 'discovery' | 'conversations'
>;
