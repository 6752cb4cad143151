/** Trending tags: those most accounts used over the last day, each a link to its tag page. */
import { TRENDING_TAGS } from '../operations.js';
import type { App } from '../shell.js';
import { escape, plural } from '../ui.js';

/** Fills `box` with up to `count` trending tags, or hides it while nothing trends. */
export function mountTrending(state: App, box: HTMLElement, count: number): () => void {
  let stopped = false;
  box.hidden = true;
  void state.client
    .query({ query: TRENDING_TAGS, variables: { first: count }, fetchPolicy: 'network-only' })
    .then(({ data }) => {
      const trends = data?.trendingTags ?? [];
      if (stopped || !trends.length) return;
      box.innerHTML = `<h2>Trending</h2>
        <ol class="trends">${trends
          .map(
            (trend) =>
              `<li data-testid="trend"><a href="#/tag/${encodeURIComponent(trend.tag)}">#${escape(trend.tag)}</a>
                <span class="hint">${plural(trend.accounts, 'person', 'people')} · ${plural(trend.posts, 'post')}</span></li>`,
          )
          .join('')}</ol>`;
      box.hidden = false;
    })
    .catch(() => {});
  return () => {
    stopped = true;
  };
}
