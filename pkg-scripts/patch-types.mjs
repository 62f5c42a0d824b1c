// Makes the generated declarations of Table and RecordBatch generic over their row type
// (`Row`, declared in src/wasm/column_types.rs), so that a TypeScript caller who says what
// the schema is gets typed columns and rows:
//
//   const table = tableFromIPC<{ id: bigint; name: string | null }>(bytes);
//   table.getChild('id').get(0); // bigint | null
//
// wasm-bindgen writes classes without type parameters, and an interface cannot add them by
// merging (merged declarations must have identical type parameters), so the lines are
// rewritten here. `Table` alone means `Table<Row>`, whose names are any string, so it
// reads as before; a column by index stays untyped.
//
// Each line must be found exactly as many times as expected, or the patch fails, and so
// the build: a wasm-bindgen upgrade that writes them differently cannot slip through.
// tests/js/types/example.ts checks the result with `tsc --strict`, including what must not
// compile.
//
// Usage: node pkg-scripts/patch-types.mjs <quiver.d.ts>...
import { readFileSync, writeFileSync } from 'node:fs';

const NAMED = 'K extends keyof T & string';

// [unpatched, patched, times expected]
const PATCHES = [
  ['export class RecordBatch {\n', 'export class RecordBatch<T extends Row = Row> {\n', 1],
  ['export class Table {\n', 'export class Table<T extends Row = Row> {\n', 1],
  [
    '    column(key: number | string): Column;\n',
    `    column<${NAMED}>(key: K): Column<T[K]>;\n    column(index: number): Column;\n`,
    1,
  ],
  [
    '    getChild(key: number | string): ChunkedColumn;\n',
    `    getChild<${NAMED}>(key: K): ChunkedColumn<T[K]>;\n` +
      '    getChild(index: number): ChunkedColumn;\n',
    1,
  ],
  // RecordBatch's and Table's.
  [
    '    toArray(options?: ValueOptions | null): Record<string, unknown>[];\n',
    '    toArray(): T[];\n    toArray(options?: ValueOptions | null): Record<string, unknown>[];\n',
    2,
  ],
  ['    readonly batches: RecordBatch[];\n', '    readonly batches: RecordBatch<T>[];\n', 1],
  [
    'export function tableFromIPC(input: Uint8Array | Uint8Array[], options?: ReaderOptions | null): Table;\n',
    'export function tableFromIPC<T extends Row = Row>(input: Uint8Array | Uint8Array[], options?: ReaderOptions | null): Table<T>;\n',
    1,
  ],
];

for (const file of process.argv.slice(2)) {
  let text = readFileSync(file, 'utf8');
  for (const [unpatched, patched, expected] of PATCHES) {
    const found = text.split(unpatched).length - 1;
    if (found !== expected) {
      throw new Error(`${file}: expected ${expected} of ${JSON.stringify(unpatched)}, found ${found}`);
    }
    text = text.replaceAll(unpatched, patched);
  }
  writeFileSync(file, text);
}
