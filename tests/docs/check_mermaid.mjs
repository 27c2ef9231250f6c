// Parses every ```mermaid block of the given Markdown files with Mermaid's own parser (the one
// GitHub renders with), so a diagram that would not render fails here. Not part of ctest: it
// needs the npm packages mermaid and jsdom, e.g.
//   npm install --prefix /tmp/mermaid mermaid@11 jsdom@24
//   node tests/docs/check_mermaid.mjs --modules /tmp/mermaid/node_modules docs/*.md
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const at = args.indexOf('--modules');
if (at < 0 || !args[at + 1]) {
  console.error('usage: check_mermaid.mjs --modules NODE_MODULES_DIR FILE.md...');
  process.exit(2);
}
const modules = path.resolve(args[at + 1]);
const files = args.filter((_, i) => i !== at && i !== at + 1);
const entry = (pkg, file) => pathToFileURL(path.join(modules, pkg, file)).href;

const { JSDOM } = await import(entry('jsdom', 'lib/api.js'));
const dom = new JSDOM('<!DOCTYPE html><body></body>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import(entry('mermaid', 'dist/mermaid.core.mjs'));
mermaid.initialize({ startOnLoad: false });

let failed = 0, count = 0;
for (const file of files) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*```mermaid\s*$/.test(lines[i])) continue;
    const start = i + 1;
    const body = [];
    for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]); i++) body.push(lines[i]);
    count++;
    try {
      const r = await mermaid.parse(body.join('\n'));
      console.log(`ok   ${file}:${start} ${r.diagramType}`);
    } catch (e) {
      failed++;
      console.log(`FAIL ${file}:${start}: ${e.message || e}`);
    }
  }
}
console.log(`check_mermaid: ${count} diagram(s), ${failed} failure(s)`);
process.exit(failed ? 1 : 0);
