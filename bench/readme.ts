/**
 * Writes benchmark tables into README.md (or a file of docs/) between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->`,
 * so no figure in the README is typed by hand: a full `npm run bench` rewrites them all.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function updateReadme(name: string, markdown: string, root = process.cwd()): boolean {
  return updateDoc('README.md', name, markdown, root);
}

/**
 * The same for any Markdown file of the repository (`docs/benchmarks.md`, `docs/previews.md`).
 * With `heading`, a file or section that is missing is made (the section appended under that
 * heading), so the generator owns its sections wherever the prose around them comes from; without
 * it, false when there is no such section.
 */
export function updateDoc(path: string, name: string, markdown: string, root = process.cwd(), heading?: string): boolean {
  const file = join(root, path);
  if (!existsSync(file) && !heading) return false;
  let text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  if (heading && !text.includes(`<!-- bench:${name} -->`)) {
    text = `${text.replace(/\n*$/, text ? '\n\n' : '')}${heading}\n\n<!-- bench:${name} -->\n<!-- /bench:${name} -->\n`;
  }
  const open = `<!-- bench:${name} -->`,
    close = `<!-- /bench:${name} -->`;
  const a = text.indexOf(open),
    b = text.indexOf(close);
  if (a < 0 || b < a) return false;
  writeFileSync(file, text.slice(0, a + open.length) + '\n' + markdown.trim() + '\n' + text.slice(b));
  return true;
}
