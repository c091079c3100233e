import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { anchorsOf, docFiles, linksOf, ROOT } from '../support/doc-snippets';

/** Every relative link and #anchor in README.md and docs/*.md leads somewhere: moving a section breaks no link. */
describe('links in the docs', () => {
  const anchors = new Map<string, Set<string>>();
  const anchorsIn = (file: string) => {
    if (!anchors.has(file)) anchors.set(file, anchorsOf(readFileSync(join(ROOT, file), 'utf8')));
    return anchors.get(file)!;
  };

  it.each(docFiles())('%s: every relative link and anchor resolves', (file) => {
    const broken: string[] = [];
    for (const link of linksOf(file)) {
      if (/^[a-z]+:/i.test(link.target)) continue; // http(s), mailto: outside the repository
      const [path, anchor] = link.target.split('#', 2) as [string, string | undefined];
      const target = path ? relative(ROOT, normalize(join(ROOT, dirname(file), decodeURI(path)))) : file;
      if (!existsSync(join(ROOT, target))) broken.push(`${file}:${link.line}: ${link.target}: no such file`);
      else if (anchor !== undefined && !target.endsWith('.md'))
        broken.push(`${file}:${link.line}: ${link.target}: an anchor into a file that is not Markdown`);
      else if (anchor !== undefined && !anchorsIn(target).has(anchor))
        broken.push(`${file}:${link.line}: ${link.target}: no heading "#${anchor}" in ${target}`);
    }
    expect(broken).toEqual([]);
  });

  it('computes anchors as GitHub does', () => {
    const found = anchorsOf(
      '# Backend health: what is known to be down\n## Extended reasoning (`thinking`)\n## A\n## A\n```\n# not a heading\n```\n',
    );
    expect([...found]).toEqual([
      'backend-health-what-is-known-to-be-down',
      'extended-reasoning-thinking',
      'a',
      'a-1',
    ]);
  });
});
