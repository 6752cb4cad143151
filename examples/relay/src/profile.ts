/**
 * A Relay profile over this API: a user's page of posts paged both ways with
 * `usePaginationFragment`, each post and the user refetchable by their global id (`node`), a list
 * and its timeline likewise, and live posts put on top of the page with `@prependEdge`.
 * `relay-compiler` (examples/relay/relay.config.json) compiles these against schema.graphql into
 * __generated__/; test/examples/relay.test.ts checks they are current and runs them against a
 * real server. In an app, babel-plugin-relay (or the SWC/Vite plugin) turns each `graphql`
 * literal into an import of its artifact.
 */
import { graphql } from 'relay-runtime';

/** One post, refetchable alone (say, after a like) through `node(id:)`. */
export const post = graphql`
  fragment profile_post on Post @refetchable(queryName: "PostRefetchQuery") {
    id
    text
    createdAt
    likeCount
    viewerHasLiked
    author { id handle displayName }
  }
`;

/**
 * The profile: `usePaginationFragment(user, ref)` gives loadNext (older posts) and loadPrevious
 * (newer ones); both go through the generated ProfilePostsPaginationQuery, by the user's id.
 * `first` has no defaultValue: Relay sends the default in place of the null that loadPrevious
 * gives it, and the API refuses `first` with `last` (the query that spreads this passes a count).
 */
export const user = graphql`
  fragment profile_user on User
  @refetchable(queryName: "ProfilePostsPaginationQuery")
  @argumentDefinitions(
    first: { type: "Int" }
    after: { type: "String" }
    last: { type: "Int" }
    before: { type: "String" }
  ) {
    id
    handle
    displayName
    followerCount
    posts(first: $first, after: $after, last: $last, before: $before) @connection(key: "profile_posts") {
      __id
      edges { cursor node { id ...profile_post } }
    }
  }
`;

/** A list and its timeline, paged and refetched the same way. */
export const list = graphql`
  fragment profile_list on List
  @refetchable(queryName: "ListTimelinePaginationQuery")
  @argumentDefinitions(first: { type: "Int", defaultValue: 10 }, after: { type: "String" }) {
    id
    name
    memberCount
    timeline(first: $first, after: $after) @connection(key: "profile_list_timeline") {
      edges { node { id ...profile_post } }
    }
  }
`;

export const profileQuery = graphql`
  query profileQuery($handle: String!, $first: Int) {
    user(handle: $handle) { ...profile_user @arguments(first: $first) }
  }
`;

export const listQuery = graphql`
  query profileListQuery($id: ID!) {
    list(id: $id) { ...profile_list }
  }
`;

/** Live posts of the home timeline, put on top of each connection named in `$connections`, each once. */
export const postAdded = graphql`
  subscription profilePostAddedSubscription($connections: [ID!]!) {
    timelinePostAdded @prependEdge(connections: $connections) {
      cursor
      node { id ...profile_post }
    }
  }
`;
