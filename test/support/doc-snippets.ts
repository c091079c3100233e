import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The project's Markdown (README.md and docs/*.md) read as data: its fenced code blocks, with the marker comment
 * that says how each is tested, and its links. The conventions are documented in docs/testing.md ("The docs'
 * snippets"): test/e2e/doc-snippets.e2e.spec.ts runs the blocks, test/unit/doc-links.spec.ts checks the links.
 */
export const ROOT = join(__dirname, '../..');

/** README.md and every docs/*.md, as paths relative to the repository. */
export function docFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

export type Marker =
  | { kind: 'run' }
  | { kind: 'file'; path: string }
  | { kind: 'same-as'; path: string }
  | { kind: 'not-run'; reason: string };

export interface Snippet {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  code: string;
  marker: Marker;
}

const FENCE = /^```\s*([\w+-]*)\s*$/;
const MARKER = /^<!--\s*snippet:\s*(.*?)\s*-->$/;

/** Every fenced block of a file (fences at the start of a line), with the marker on the line before it, if any. */
export function snippetsOf(file: string): Snippet[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const snippets: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) continue;
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    if (end < 0) throw new Error(`${file}:${i + 1}: a code block that is never closed`);
    const marker = parseMarker(file, i, i > 0 ? MARKER.exec(lines[i - 1].trim()) : null);
    snippets.push({ file, line: i + 1, lang: open[1], code: lines.slice(i + 1, end).join('\n'), marker });
    i = end;
  }
  return snippets;
}

function parseMarker(file: string, index: number, match: RegExpExecArray | null): Marker {
  if (!match) return { kind: 'run' };
  const text = match[1];
  let m: RegExpExecArray | null;
  if ((m = /^not run:\s*(.+)$/.exec(text))) return { kind: 'not-run', reason: m[1] };
  if ((m = /^file\s+(\S+)$/.exec(text))) return { kind: 'file', path: m[1] };
  if ((m = /^same as\s+(\S+)$/.exec(text))) return { kind: 'same-as', path: m[1] };
  throw new Error(`${file}:${index}: unknown snippet marker "${text}" (see docs/testing.md)`);
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens; repeats get -1, -2, ... */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (/^```/.test(line)) inFence = !inFence;
    const heading = !inFence && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count ? `${slug}-${count}` : slug);
  }
  return anchors;
}

export interface Link {
  file: string;
  line: number;
  target: string;
}

/** Every Markdown link and image target of a file, outside code blocks and inline code. */
export function linksOf(file: string): Link[] {
  const links: Link[] = [];
  let inFence = false;
  readFileSync(join(ROOT, file), 'utf8')
    .split('\n')
    .forEach((raw, i) => {
      if (/^```/.test(raw)) inFence = !inFence;
      if (inFence) return;
      const line = raw.replace(/`[^`]*`/g, '');
      for (const match of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g))
        links.push({ file, line: i + 1, target: match[1] });
      for (const match of line.matchAll(/<(https?:\/\/[^>]+)>/g))
        links.push({ file, line: i + 1, target: match[1] });
    });
  return links;
}
