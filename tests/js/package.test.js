// The package as built into pkg/: its exports map, its files, the glue patch, and its
// type declarations under Node's and a bundler's module resolution.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { brotliCompressSync, constants } from 'node:zlib';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const pkg = join(root, 'pkg');
const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));

test('exports map sends Node to the Node build and everything else to the web build', () => {
  const main = manifest.exports['.'];
  assert.deepEqual(Object.keys(main), ['node', 'browser', 'import', 'default']);
  assert.deepEqual(main.node, { types: './node/index.d.ts', default: './node/index.js' });
  for (const condition of ['browser', 'import', 'default']) {
    assert.deepEqual(main[condition], { types: './web/index.d.ts', default: './web/index.js' });
  }
});

test('every file named in the exports map exists', () => {
  const targets = (value) => (typeof value === 'string' ? [value] : Object.values(value).flatMap(targets));
  for (const target of targets(manifest.exports)) assert.ok(existsSync(join(pkg, target)), target);
});

test('the version is the crate version', () => {
  const cargo = readFileSync(join(root, 'Cargo.toml'), 'utf8');
  const crateVersion = cargo.match(/\[package\][^[]*?\nversion = "([^"]+)"/)[1];
  assert.equal(manifest.version, crateVersion);
});

test('the web glue decodes strings from resizable buffers (patch-glue.mjs applied)', () => {
  const glue = readFileSync(join(pkg, 'web/quiver.js'), 'utf8');
  // Every decode of wasm memory, leaving out the glue's argument-less warm-up calls.
  const calls = glue.match(/cachedTextDecoder\.decode\((?!\)).*/g);
  assert.deepEqual(calls, [
    'cachedTextDecoder.decode(bytes.buffer.resizable ? bytes.slice() : bytes);',
  ]);
  // And every encode into it.
  assert.deepEqual(glue.match(/= .*cachedTextEncoder\.encodeInto\(.*/g), [
    '= view.buffer.resizable ? encodeIntoCopy(arg, view) : cachedTextEncoder.encodeInto(arg, view);',
  ]);
});

test('npm pack ships both builds, their types, the README and the license, and nothing else', () => {
  const [packed] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', pkg], {
    cwd: root,
    encoding: 'utf8',
  }));
  const files = packed.files.map((f) => f.path).filter((p) => !p.includes('/snippets/')).sort();
  assert.deepEqual(files, [
    'LICENSE',
    'README.md',
    'node/extras.js',
    'node/index.d.ts',
    'node/index.js',
    'node/quiver.cjs',
    'node/quiver.d.cts',
    'node/quiver_bg.wasm',
    'node/quiver_bg.wasm.d.ts',
    'package.json',
    'web/extras.js',
    'web/index.d.ts',
    'web/index.js',
    'web/load-error.js',
    'web/quiver.d.ts',
    'web/quiver.js',
    'web/quiver_bg.wasm',
    'web/quiver_bg.wasm.d.ts',
  ]);
});

for (const flavour of ['node', 'web']) {
  test(`tsc --strict compiles an example of the whole API (${flavour} resolution)`, () => {
    const tsc = join(root, 'node_modules/.bin/tsc');
    const project = join(root, `tests/js/types/tsconfig.${flavour}.json`);
    try {
      execFileSync(tsc, ['-p', project], { cwd: root, encoding: 'utf8' });
    } catch (error) {
      assert.fail(`tsc failed:\n${error.stdout}${error.stderr}`);
    }
  });
}

// The size budget of docs/size.md: brotli at quality 11, as build.sh prints it.
test('the .wasm is at most 300 KiB brotli', () => {
  const wasm = readFileSync(join(pkg, 'web/quiver_bg.wasm'));
  const brotli = brotliCompressSync(wasm, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } });
  const kib = brotli.length / 1024;
  assert.ok(kib <= 300, `pkg/web/quiver_bg.wasm is ${kib.toFixed(1)} KiB brotli, over the 300 KiB budget (docs/size.md)`);
});
