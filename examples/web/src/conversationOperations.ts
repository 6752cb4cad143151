/** The operations of conversations the web client sends: edits and their history, pins. Typed from the schema like operations.ts. */
import { graphql } from './gql/index.js';

export const EDIT_POST = graphql(`
  mutation EditPost($id: ID!, $text: String!) {
    editPost(id: $id, text: $text) { id text editedAt mentions { id handle } }
  }
`);
export const POST_EDITS = graphql(`
  query PostEdits($id: ID!) {
    post(id: $id) { id editedAt edits { text editedAt } }
  }
`);
export const PIN_POST = graphql(`
  mutation PinPost($id: ID!) {
    pinPost(id: $id) { id pinnedPosts { id pinned } }
  }
`);
export const UNPIN_POST = graphql(`
  mutation UnpinPost($id: ID!) {
    unpinPost(id: $id) { id pinnedPosts { id pinned } }
  }
`);
/** Edits of posts in the viewer's timeline: the answer lands in Apollo's cache, so every list shows the new text. */
export const POST_EDITED = graphql(`
  subscription PostEdited {
    timelinePostEdited { id text editedAt mentions { id handle } }
  }
`);
