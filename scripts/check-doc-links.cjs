#!/usr/bin/env node
'use strict';
/**
 * Walks the relative links of a folder's Markdown, from its README.md: every link and image must name a file that
 * is there, and a `#fragment` a heading of the file it points into (GitHub's anchors). Each Markdown file reached
 * is walked in turn. scripts/check-package.sh runs it inside the unpacked tarball (what a user of the package can
 * open), test/unit/doc-links.test.ts on the repository.
 *
 *   node scripts/check-doc-links.cjs <folder> [entry.md ...]     # default entry: README.md
 *
 * Prints each broken link as `file: target (why)` and exits 1 when there is one; else one line with the counts.
 */
const fs = require('node:fs');
const path = require('node:path');

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2... */
function slugsOf(markdown) {
  const seen = new Map();
  const out = new Set();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]
      .replace(/<[^>]+>/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The link targets of a Markdown text outside code: `[x](target)`, `![x](target)`, `[x]: target`. */
function linksOf(markdown) {
  const targets = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const bare = line.replace(/`[^`]*`/g, '');
    for (const m of bare.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(m[1]);
    const ref = /^\s*\[[^\]]+\]:\s*(\S+)/.exec(bare);
    if (ref) targets.push(ref[1]);
  }
  return targets;
}

function checkLinks(root, entries = ['README.md']) {
  const broken = [];
  const walked = new Set();
  let links = 0;
  const queue = entries.map((e) => path.resolve(root, e));
  const slugCache = new Map();
  const slugs = (file) => {
    if (!slugCache.has(file)) slugCache.set(file, slugsOf(fs.readFileSync(file, 'utf8')));
    return slugCache.get(file);
  };
  while (queue.length > 0) {
    const file = queue.shift();
    if (walked.has(file)) continue;
    walked.add(file);
    const rel = path.relative(root, file);
    if (!fs.existsSync(file)) {
      broken.push(`${rel}: (the entry itself is missing)`);
      continue;
    }
    for (const target of linksOf(fs.readFileSync(file, 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      links += 1;
      const [pathPart, fragment] = target.split('#', 2);
      const dest = pathPart === '' ? file : path.resolve(path.dirname(file), decodeURIComponent(pathPart));
      if (path.relative(root, dest).startsWith('..')) {
        broken.push(`${rel}: ${target} (outside the folder)`);
        continue;
      }
      if (!fs.existsSync(dest)) {
        broken.push(`${rel}: ${target} (no such file)`);
        continue;
      }
      const isMarkdown = dest.endsWith('.md') && fs.statSync(dest).isFile();
      if (fragment && isMarkdown && !slugs(dest).has(fragment.toLowerCase()))
        broken.push(`${rel}: ${target} (no heading #${fragment} in ${path.relative(root, dest)})`);
      if (isMarkdown) queue.push(dest);
    }
  }
  return { broken, files: walked.size, links };
}

module.exports = { checkLinks, linksOf, slugsOf };

if (require.main === module) {
  const [root, ...entries] = process.argv.slice(2);
  if (!root) {
    console.error('usage: check-doc-links.cjs <folder> [entry.md ...]');
    process.exit(2);
  }
  const { broken, files, links } = checkLinks(path.resolve(root), entries.length > 0 ? entries : undefined);
  for (const b of broken) console.error(`broken link: ${b}`);
  if (broken.length > 0) {
    console.error(`check-doc-links: ${broken.length} broken link(s) in ${files} Markdown file(s) under ${root}`);
    process.exit(1);
  }
  console.log(`check-doc-links: ${links} relative link(s) in ${files} Markdown file(s) under ${root}, all resolve`);
}
