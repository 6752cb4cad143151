/** The operations of locked accounts, follow requests, reports and the staff page. */
import { graphql } from './gql/index.js';
import type { FollowRequestsQuery, OpenReportsQuery } from './gql/graphql.js';

export type FollowRequest = FollowRequestsQuery['followRequests']['edges'][number]['node'];
export type OpenReport = OpenReportsQuery['reports']['edges'][number]['node'];

export const VIEWER_LOCKED = graphql(`
  query ViewerLocked {
    viewer { id locked }
  }
`);
export const SET_LOCKED = graphql(`
  mutation SetLocked($locked: Boolean!) {
    updateProfile(locked: $locked) { id locked }
  }
`);
export const FOLLOW_REQUESTS = graphql(`
  query FollowRequests($first: Int, $after: String) {
    followRequests(first: $first, after: $after) {
      totalCount
      edges { cursor node { ...AuthorFields bio } }
      pageInfo { hasNextPage endCursor }
    }
  }
`);
export const APPROVE_REQUEST = graphql(`
  mutation ApproveFollowRequest($handle: String!) {
    approveFollowRequest(handle: $handle) { id handle }
  }
`);
export const REJECT_REQUEST = graphql(`
  mutation RejectFollowRequest($handle: String!) {
    rejectFollowRequest(handle: $handle) { id handle }
  }
`);
export const REPORT = graphql(`
  mutation Report($handle: String!, $postId: ID, $reason: ReportReason!, $comment: String) {
    report(handle: $handle, postId: $postId, reason: $reason, comment: $comment) { id state }
  }
`);
export const OPEN_REPORTS = graphql(`
  query OpenReports($first: Int) {
    reports(state: OPEN, first: $first) {
      edges {
        cursor
        node {
          id
          reason
          comment
          createdAt
          reporter { id handle }
          account { id handle }
          post { id text }
        }
      }
    }
  }
`);
export const RESOLVE_REPORT = graphql(`
  mutation ResolveReport($id: ID!, $action: ModerationAction!) {
    resolveReport(id: $id, action: $action) { id state resolution }
  }
`);
