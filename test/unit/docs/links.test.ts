import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { anchorsOf, documentationFiles, linksOf } from './markdown-files.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));

/** Where each relative link of one file points that does not exist, as `file:line target`. */
function brokenLinks(file: string): string[] {
  const text = readFileSync(join(REPO, file), 'utf8');
  return linksOf(text).flatMap(({ line, target }) => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return [];
    const [path = '', anchor] = target.split('#', 2);
    const resolved = path === '' ? join(REPO, file) : normalize(join(REPO, dirname(file), decodeURIComponent(path)));
    const where = `${file}:${line} ${target}`;
    if (!existsSync(resolved)) return [`${where}: no such file`];
    if (anchor === undefined || anchor === '') return [];
    if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) return [`${where}: an anchor into a file that is not Markdown`];
    return anchorsOf(readFileSync(resolved, 'utf8')).has(decodeURIComponent(anchor)) ? [] : [`${where}: no heading with that anchor`];
  });
}

describe('links in the documentation', () => {
  const files = documentationFiles(REPO);

  it('covers the README, CONTRIBUTING, CHANGELOG and docs/', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', 'docs/guarantees.md', 'docs/internals/zookeeper-addon.md']));
  });

  it.each(files)('%s: every relative link and #anchor leads somewhere', (file) => {
    expect(brokenLinks(file)).toEqual([]);
  });
});

describe('the README', () => {
  it('stays a five-minute read: at most 250 lines', () => {
    expect(readFileSync(join(REPO, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(250);
  });
});

describe('the link checker', () => {
  it('slugs headings as GitHub does, numbering repeats', () => {
    const anchors = anchorsOf('# Guarantees\n## Response options: `filter_path`, `pretty`\n## What holds\n## What holds\n```\n# not a heading\n```\n');
    expect([...anchors]).toEqual(['guarantees', 'response-options-filter_path-pretty', 'what-holds', 'what-holds-1']);
  });

  it('finds links and images outside code, not inside it', () => {
    const links = linksOf('See [a](docs/a.md#x) and ![chart](b.svg).\n`[not](c.md)`\n```\n[not](d.md)\n```\n[ref]: e.md\n');
    expect(links.map((link) => link.target)).toEqual(['docs/a.md#x', 'b.svg', 'e.md']);
  });
});
