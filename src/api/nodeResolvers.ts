import type { KeywordFilterRecord } from '../graph/readerView.js';
import type { ListRecord } from '../records/lists.js';
import type { ReportRecord } from '../records/moderation.js';
import type { NotificationRecord } from '../records/notifications.js';
import { toDescriptor, type MediaRecord } from '../records/media.js';
import type { PostRecord } from '../records/posts.js';
import type { UserRecord } from '../records/users.js';
import type { RequestContext } from './context.js';
import type { Resolvers } from './generated/graphql.js';
import { isAccountOf, lookupId, nodeTypeOf } from './globalIds.js';

type NodeRecord = UserRecord | PostRecord | ListRecord | NotificationRecord | KeywordFilterRecord | MediaRecord | ReportRecord;

/**
 * What a global id names, as the viewer would see it through the type's own field: a user as
 * `user(handle:)` (of the same account, not a later one with the handle), a post as `post(id:)`,
 * the viewer's own lists, notifications and keyword filters, and an image for its uploader or for
 * whoever may see the post it is attached to (as that post shows it). Everything else, another
 * account's included, is null, with the same work done as for an unknown id of the type. Each
 * type goes through its request loader, so `nodes` reads one type's ids in one query.
 */
export async function findNode(id: string, context: RequestContext): Promise<NodeRecord | null> {
  const parsed = lookupId(id);
  if (parsed === null) return null;
  const { viewerId, loaders } = context;
  switch (parsed.type) {
    case 'User': {
      const user = await loaders.users.load(parsed.handle);
      return user && isAccountOf(parsed, user) ? user : null;
    }
    case 'Post':
      return loaders.nodePosts.load(parsed.postId.toHexString());
    case 'List':
      return viewerId === null ? null : loaders.viewerLists.load(parsed.listId.toHexString());
    case 'KeywordFilter':
      return viewerId === null ? null : loaders.viewerKeywordFilters.load(parsed.filterId.toHexString());
    case 'Notification':
      // The id names its recipient: another's is answered without a look, whether or not it exists.
      return viewerId === null || parsed.recipientId !== viewerId ? null : loaders.viewerNotifications.load(parsed.notificationId);
    case 'Media': {
      const { media } = context.services;
      const upload = await media.found(parsed.mediaId);
      if (!upload) return null;
      if (upload.owner === viewerId) return media.record(toDescriptor(upload), context.origin);
      const post = upload.post ? await loaders.nodePosts.load(upload.post.toHexString()) : null;
      const image = post?.body.media.find((each) => each.id.equals(parsed.mediaId));
      return image ? media.record(image, context.origin) : null;
    }
    case 'Report':
      // Staff's, like the `reports` list; anyone else finds nothing, as for an unknown id.
      return (await context.services.staff.isStaff(viewerId)) ? context.services.reports.find(parsed.reportId) : null;
  }
}

export const nodeResolvers: { Query: Pick<NonNullable<Resolvers['Query']>, 'node' | 'nodes'>; Node: NonNullable<Resolvers['Node']> } = {
  Query: {
    node: (_parent, { id }, context) => findNode(id, context),
    // One promise per id: an id in a former form fails its own item (BAD_USER_INPUT at `nodes.<i>`), not the list.
    // (Typed as codegen allows a list item to be: a record or a promise of one; a promise of null is a null item.)
    nodes: (_parent, { ids }, context) => ids.map((id) => findNode(id, context)) as Promise<NodeRecord>[],
  },
  Node: {
    __resolveType: (record) => nodeTypeOf(record),
  },
};
