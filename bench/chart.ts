/**
 * A line chart as a standalone SVG: latency against throughput, one line per series. Small enough
 * to write by hand; a plotting library (vega and friends) would bring tens of megabytes for this.
 */
export interface ChartSeries {
  label: string;
  points: { x: number; y: number }[];
  dashed?: boolean;
}

export interface ChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  series: ChartSeries[];
  width?: number;
  height?: number;
}

const palette = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf'];

/** Round tick steps (1, 2, 5 × 10ⁿ) giving about `count` ticks from 0 to `max`. */
function ticks(max: number, count = 5): number[] {
  if (!(max > 0)) return [0, 1];
  const raw = max / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((candidate) => candidate >= raw)!;
  const result: number[] = [];
  for (let value = 0; value <= max + step / 2; value += step) result.push(Number(value.toPrecision(12)));
  if (result.at(-1)! < max) result.push(result.at(-1)! + step);
  return result;
}

const escapeXml = (text: string) => text.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]!);
const format = (value: number) => (value >= 1000 ? value.toLocaleString('en-US') : String(value));

export function lineChartSvg(options: ChartOptions): string {
  const width = options.width ?? 820;
  const height = options.height ?? 440;
  const margin = { top: 40, right: 250, bottom: 50, left: 64 };
  const plotWidth = width - margin.left - margin.right;
  const plotHeight = height - margin.top - margin.bottom;
  const points = options.series.flatMap((series) => series.points).filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
  const xTicks = ticks(Math.max(1, ...points.map((p) => p.x)));
  const yTicks = ticks(Math.max(1, ...points.map((p) => p.y)));
  const xMax = xTicks.at(-1)!;
  const yMax = yTicks.at(-1)!;
  const sx = (x: number) => margin.left + (x / xMax) * plotWidth;
  const sy = (y: number) => margin.top + plotHeight - (y / yMax) * plotHeight;

  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${margin.left}" y="22" font-size="15" font-weight="bold">${escapeXml(options.title)}</text>`,
  ];
  for (const x of xTicks) {
    parts.push(`<line x1="${sx(x)}" y1="${margin.top}" x2="${sx(x)}" y2="${margin.top + plotHeight}" stroke="#e5e5e5"/>`);
    parts.push(`<text x="${sx(x)}" y="${margin.top + plotHeight + 16}" text-anchor="middle">${format(x)}</text>`);
  }
  for (const y of yTicks) {
    parts.push(`<line x1="${margin.left}" y1="${sy(y)}" x2="${margin.left + plotWidth}" y2="${sy(y)}" stroke="#e5e5e5"/>`);
    parts.push(`<text x="${margin.left - 6}" y="${sy(y) + 4}" text-anchor="end">${format(y)}</text>`);
  }
  parts.push(
    `<rect x="${margin.left}" y="${margin.top}" width="${plotWidth}" height="${plotHeight}" fill="none" stroke="#999"/>`,
    `<text x="${margin.left + plotWidth / 2}" y="${height - 12}" text-anchor="middle">${escapeXml(options.xLabel)}</text>`,
    `<text transform="translate(16 ${margin.top + plotHeight / 2}) rotate(-90)" text-anchor="middle">${escapeXml(options.yLabel)}</text>`,
  );
  options.series.forEach((series, index) => {
    const color = palette[Math.floor(index / 2) % palette.length]!;
    const sorted = series.points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y)).sort((a, b) => a.x - b.x);
    const dash = series.dashed ? ' stroke-dasharray="6 4"' : '';
    if (sorted.length > 0) {
      parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2"${dash} points="${sorted.map((p) => `${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(' ')}"/>`);
      for (const p of sorted) parts.push(`<circle cx="${sx(p.x).toFixed(1)}" cy="${sy(p.y).toFixed(1)}" r="3" fill="${color}"/>`);
    }
    const legendY = margin.top + 10 + index * 20;
    const legendX = margin.left + plotWidth + 16;
    parts.push(
      `<line x1="${legendX}" y1="${legendY}" x2="${legendX + 24}" y2="${legendY}" stroke="${color}" stroke-width="2"${dash}/>`,
      `<text x="${legendX + 30}" y="${legendY + 4}">${escapeXml(series.label)}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
