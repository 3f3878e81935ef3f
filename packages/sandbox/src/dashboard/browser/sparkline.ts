import type { ScorePoint } from '../../users/user-store.js';

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 120;
const HEIGHT = 28;

function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number>,
): SVGElementTagNameMap[K] {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, String(value));
  return element;
}

/**
 * A small chart of a user's score over time (0 at the bottom, 1 at the top), with a dashed line at
 * the watch's threshold when there is one. Its `<title>` says the same in words.
 */
export function sparkline(history: readonly ScorePoint[], threshold?: number): SVGSVGElement {
  const chart = svg('svg', {
    width: WIDTH,
    height: HEIGHT,
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    class: 'spark',
    role: 'img',
  });
  const title = svg('title', {});
  const scores = history.map((point) => point.score.toFixed(2));
  title.textContent = `Score over time: ${scores.join(', ') || 'none yet'}`;
  chart.appendChild(title);
  const y = (score: number): number => 2 + (1 - score) * (HEIGHT - 4);
  if (threshold !== undefined) {
    const line = { x1: 0, x2: WIDTH, y1: y(threshold), y2: y(threshold), class: 'threshold' };
    chart.appendChild(svg('line', line));
  }
  const first = history[0]?.at ?? 0;
  const span = (history.at(-1)?.at ?? 0) - first;
  const x = (at: number, index: number): number => {
    const share =
      span > 0 ? (at - first) / span : history.length > 1 ? index / (history.length - 1) : 1;
    return 2 + share * (WIDTH - 4);
  };
  const points = history.map((point, index) => `${x(point.at, index)},${y(point.score)}`);
  if (points.length > 1) chart.appendChild(svg('polyline', { points: points.join(' ') }));
  const last = history.at(-1);
  if (last)
    chart.appendChild(
      svg('circle', { cx: x(last.at, history.length - 1), cy: y(last.score), r: 2.5 }),
    );
  return chart;
}
