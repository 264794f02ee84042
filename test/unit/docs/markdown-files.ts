import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import GithubSlugger from 'github-slugger';

/** The user and contributor documentation: the README, CONTRIBUTING, CHANGELOG and docs/. */
export function documentationFiles(repo: string): string[] {
  const top = ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', 'BENCHMARKS.md'].map((name) => join(repo, name));
  const docs = readdirSync(join(repo, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(repo, 'docs', name));
  return [...top, ...docs].filter((path) => {
    try {
      readFileSync(path);
      return true;
    } catch {
      return false;
    }
  }).map((path) => relative(repo, path));
}

/** The lines of a Markdown text outside fenced code blocks, with their line numbers (1-based). */
export function proseLines(text: string): { readonly line: number; readonly text: string }[] {
  const lines: { line: number; text: string }[] = [];
  let fence: string | null = null;
  text.split('\n').forEach((content, i) => {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(content)?.[1];
    if (marker !== undefined && (fence === null || marker.startsWith(fence))) {
      fence = fence === null ? marker : null;
      return;
    }
    if (fence === null) lines.push({ line: i + 1, text: content });
  });
  return lines;
}

/** The anchors GitHub gives a Markdown file: one per heading (deduplicated with -1, -2, …), and explicit ids. */
export function anchorsOf(text: string): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  for (const { text: line } of proseLines(text)) {
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading !== undefined) anchors.add(slugger.slug(plainText(heading)));
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1] ?? '');
  }
  return anchors;
}

/** Heading text as GitHub slugs it: the text of links and code spans, without emphasis markers. */
function plainText(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/(\*\*|__|\*)/g, '');
}

export interface MarkdownLink {
  readonly line: number;
  readonly target: string;
}

/** Inline links and images, and reference definitions, outside code. */
export function linksOf(text: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const { line, text: content } of proseLines(text)) {
    const withoutCode = content.replace(/`[^`]*`/g, '');
    for (const match of withoutCode.matchAll(/!?\[(?:[^[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ line, target: match[1] ?? '' });
    }
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(withoutCode)?.[1];
    if (definition !== undefined) links.push({ line, target: definition });
  }
  return links;
}
