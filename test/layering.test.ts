import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

// The import rules of docs/architecture.md, checked on the sources: folders (and the top-level
// modules) form layers, and every import points down. An import of a higher layer, or a circle of
// folders, fails here before it grows into the tangle this layout replaced.

const src = new URL('../src/', import.meta.url).pathname;

/** Bottom first. A unit is a folder under src/, or a module directly in src/. */
const layers = [
  'config',
  'logger',
  'errors',
  'sleep',
  'observability',
  'db',
  'cache',
  'records',
  'queue',
  'changes',
  'content',
  'graph',
  'auth',
  'notifications',
  'media',
  'feed',
  'moderation',
  'live',
  'services',
  'api',
  'app',
  'main',
] as const;

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The relative imports of a file (static, dynamic and re-exports), as paths under src/. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)].map((match) => match[1]!);
  return specifiers.map((specifier) => relative(src, normalize(join(dirname(file), specifier))).replace(/\.js$/, '.ts'));
}

const unitOf = (path: string) => path.split('/')[0]!.replace(/\.ts$/, '');

const files = sourceFiles(src).map((file) => ({ path: relative(src, file), imports: importsOf(file) }));
const arrows = new Set<string>();
for (const file of files) {
  for (const imported of file.imports) {
    const [from, to] = [unitOf(file.path), unitOf(imported)];
    if (from !== to) arrows.add(`${from} -> ${to}`);
  }
}

describe('layering of src/', () => {
  it('places every folder and top-level module in a layer', () => {
    const units = new Set(files.map((file) => unitOf(file.path)));
    expect([...units].filter((unit) => !(layers as readonly string[]).includes(unit))).toEqual([]);
  });

  it('has imports that only point down', () => {
    const rank = (unit: string) => (layers as readonly string[]).indexOf(unit);
    const upward = [...arrows].filter((arrow) => {
      const [from, to] = arrow.split(' -> ') as [string, string];
      return rank(to) > rank(from);
    });
    expect(upward).toEqual([]);
  });

  it('has no circle of folders', () => {
    const next = new Map<string, string[]>();
    for (const arrow of arrows) {
      const [from, to] = arrow.split(' -> ') as [string, string];
      next.set(from, [...(next.get(from) ?? []), to]);
    }
    const circles: string[] = [];
    const visit = (unit: string, path: string[]) => {
      for (const to of next.get(unit) ?? []) {
        if (to === path[0]) circles.push([...path, to].join(' -> '));
        else if (!path.includes(to) && to > path[0]!) visit(to, [...path, to]);
      }
    };
    for (const unit of next.keys()) visit(unit, [unit]);
    expect(circles).toEqual([]);
  });

  it('has no circle of modules either', () => {
    const importsByFile = new Map(files.map((file) => [file.path, file.imports]));
    const state = new Map<string, 'visiting' | 'done'>();
    const circles: string[] = [];
    const visit = (path: string, stack: string[]) => {
      state.set(path, 'visiting');
      for (const imported of importsByFile.get(path) ?? []) {
        if (state.get(imported) === 'visiting') circles.push([...stack.slice(stack.indexOf(imported)), imported].join(' -> '));
        else if (!state.has(imported)) visit(imported, [...stack, imported]);
      }
      state.set(path, 'done');
    };
    for (const file of files) if (!state.has(file.path)) visit(file.path, [file.path]);
    expect(circles).toEqual([]);
  });
});
