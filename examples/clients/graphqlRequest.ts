import { ClientError, GraphQLClient, gql } from 'graphql-request';

export const SIGN_UP = gql`
  mutation SignUp($handle: String!, $password: String!) { signUp(handle: $handle, password: $password) { token } }
`;
export const TIMELINE = gql`
  query Timeline($first: Int, $after: String) {
    timeline(first: $first, after: $after) {
      edges { cursor node { id text author { handle } } }
      pageInfo { hasNextPage endCursor }
    }
  }
`;

export interface TimelinePage {
  timeline: {
    edges: { cursor: string; node: { id: string; text: string; author: { handle: string } } }[];
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
  };
}

/** graphql-request POSTs JSON, which CSRF prevention accepts as it is. */
export function createFeedClient(url: string, token?: string): GraphQLClient {
  return new GraphQLClient(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
}

/** Every post of the timeline, page after page. */
export async function wholeTimeline(client: GraphQLClient, pageSize = 20): Promise<TimelinePage['timeline']['edges']> {
  const edges: TimelinePage['timeline']['edges'] = [];
  let after: string | null = null;
  do {
    const page: TimelinePage = await client.request<TimelinePage>(TIMELINE, { first: pageSize, after });
    edges.push(...page.timeline.edges);
    after = page.timeline.pageInfo.hasNextPage ? page.timeline.pageInfo.endCursor : null;
  } while (after);
  return edges;
}

/** The `extensions.code` of a refused request (UNAUTHENTICATED, BAD_USER_INPUT, …), or rethrows. */
export function errorCode(error: unknown): string {
  if (error instanceof ClientError) return String(error.response.errors?.[0]?.extensions?.code);
  throw error;
}
