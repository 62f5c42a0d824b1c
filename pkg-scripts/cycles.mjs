#!/usr/bin/env node
// Finds import cycles between the modules of a crate: `node pkg-scripts/cycles.mjs
// src gateway/src` prints each cycle and exits 1 if there is one.
//
// An edge goes from a module to each module whose item it names: in a `use` (braces,
// globs and `as` included) or as a full `crate::`, `super::` or `self::` path in code
// (`crate::upstream::check_token(t)`). A name is followed through the `use` that brought
// it into its module, to the module that defines it, so `super::Failure` counts for
// `status`, not for the parent that re-exports it. Inline modules (`mod tests { .. }`)
// are modules of their own, so what a test uses is not counted for its file.
//
// A module and the modules inside it are one unit here: a parent re-exports its children
// and its children use what it defines, and Rust's `mod` ties them anyway. Only edges
// between modules neither of which holds the other count.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/** Rust source without comments, strings and char literals (each becomes a space). */
function strip(text) {
  let out = '';
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i];
    const next = text[i + 1];
    if (c === '/' && next === '/') {
      while (i < n && text[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && next === '*') {
      let depth = 0;
      do {
        if (text.startsWith('/*', i)) { depth++; i += 2; }
        else if (text.startsWith('*/', i)) { depth--; i += 2; }
        else i++;
      } while (depth > 0 && i < n);
      out += ' ';
      continue;
    }
    // Raw strings: r"..", r#".."#, br#".."#.
    const raw = /^b?r(#*)"/.exec(text.slice(i, i + 40));
    if (raw && !/[A-Za-z0-9_]/.test(text[i - 1] ?? '')) {
      const end = text.indexOf(`"${raw[1]}`, i + raw[0].length);
      i = end < 0 ? n : end + 1 + raw[1].length;
      out += ' ';
      continue;
    }
    if (c === '"') {
      i++;
      while (i < n && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      i++;
      out += ' ';
      continue;
    }
    if (c === "'") {
      // A char literal ('a', '\n', '\u{..}'), not a lifetime ('a).
      const lit = /^'(\\(u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'])'/u.exec(text.slice(i, i + 12));
      if (lit) {
        i += lit[0].length;
        out += ' ';
        continue;
      }
    }
    out += c;
    i++;
  }
  return out;
}

/** The `use` trees of `body` (from `use` to `;`), each flattened to paths and names. */
function useTrees(tree) {
  // Splits `a::{b, c::{d, e as f}}` into [path, alias] pairs.
  const pairs = [];
  const walk = (prefix, s) => {
    s = s.trim();
    if (!s) return;
    const brace = s.indexOf('{');
    if (brace >= 0) {
      const head = s.slice(0, brace).replace(/::\s*$/, '').trim();
      const inner = s.slice(brace + 1, s.lastIndexOf('}'));
      const base = head ? [...prefix, ...head.split('::').map((p) => p.trim())] : prefix;
      let depth = 0;
      let start = 0;
      for (let k = 0; k <= inner.length; k++) {
        const ch = inner[k];
        if (ch === '{') depth++;
        else if (ch === '}') depth--;
        else if ((ch === ',' && depth === 0) || k === inner.length) {
          walk(base, inner.slice(start, k));
          start = k + 1;
        }
      }
      return;
    }
    const [path, alias] = s.split(/\s+as\s+/);
    const parts = [...prefix, ...path.split('::').map((p) => p.trim())].filter(Boolean);
    const last = parts[parts.length - 1];
    const name = alias?.trim() ?? (last === 'self' ? parts[parts.length - 2] : last);
    pairs.push([parts.filter((p) => p !== 'self' || parts.indexOf(p) === 0), name]);
  };
  walk([], tree);
  return pairs;
}

/**
 * The modules of the crate rooted at `dir`: for each, its parent, children, the names
 * its `use`s bring in, and the paths it names.
 */
function crateModules(dir) {
  const modules = new Map();
  const module = (path) => {
    if (!modules.has(path)) {
      modules.set(path, { path, children: new Set(), imports: new Map(), paths: [] });
    }
    return modules.get(path);
  };
  const files = [];
  const collect = (d) => {
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) collect(p);
      else if (p.endsWith('.rs')) files.push(p);
    }
  };
  collect(dir);
  for (const file of files) {
    const rel = relative(dir, file).split(sep);
    if (rel.length === 1 && rel[0] === 'main.rs') continue; // the binary: its own crate
    const last = rel.pop().replace(/\.rs$/, '');
    const segs = ['crate', ...rel, ...(last === 'mod' || last === 'lib' ? [] : [last])];
    const code = strip(readFileSync(file, 'utf8'));
    scan(code, segs, module, file);
  }
  for (const m of modules.values()) {
    const parent = m.path.split('::').slice(0, -1).join('::');
    if (parent && modules.has(parent)) modules.get(parent).children.add(m.path);
  }
  return modules;
}

/** Records the `mod`s, `use`s and full paths of one file, module by module. */
function scan(code, segs, module, file) {
  // The inline modules open at each brace depth.
  const scopes = [{ depth: 0, path: segs.join('::') }];
  module(segs.join('::')).file = file;
  let depth = 0;
  const token = /\bmod\s+([A-Za-z_]\w*)\s*([{;])|\buse\s+([^;]+);|(\$?)\b((?:crate|super|self)(?:\s*::\s*[A-Za-z_]\w*)+)|[{}]/g;
  for (let m; (m = token.exec(code)); ) {
    const here = scopes[scopes.length - 1].path;
    if (m[0] === '{') depth++;
    else if (m[0] === '}') {
      depth--;
      while (scopes.length > 1 && scopes[scopes.length - 1].depth > depth) scopes.pop();
    } else if (m[1]) {
      const child = `${here}::${m[1]}`;
      module(child);
      if (m[2] === '{') {
        depth++;
        scopes.push({ depth, path: child });
      }
    } else if (m[3] !== undefined) {
      for (const [path, name] of useTrees(m[3].replace(/\s+/g, ' '))) {
        module(here).paths.push(path);
        if (name !== '*') module(here).imports.set(name, path);
      }
    } else if (m[5] && !m[4]) {
      module(here).paths.push(m[5].split('::').map((p) => p.trim()));
    }
  }
}

/** The module that defines what `path`, named in module `from`, points at; or none. */
function resolve(modules, from, path, hops = 0) {
  let at;
  let rest = [...path];
  if (rest[0] === 'crate') {
    at = 'crate';
    rest.shift();
  } else if (rest[0] === 'self' || rest[0] === 'super') {
    at = from;
  } else if (modules.get(from)?.children.has(`${from}::${rest[0]}`)) {
    at = from; // a child module, by the 2018 uniform paths
  } else if (modules.get(from)?.imports.has(rest[0]) && hops < 8) {
    const [first, ...tail] = rest;
    return resolve(modules, from, [...modules.get(from).imports.get(first), ...tail], hops + 1);
  } else {
    return null; // another crate
  }
  while (rest[0] === 'self' || rest[0] === 'super') {
    if (rest.shift() === 'super') at = at.split('::').slice(0, -1).join('::');
  }
  while (rest.length && modules.has(`${at}::${rest[0]}`)) at = `${at}::${rest.shift()}`;
  const imported = rest.length && modules.get(at)?.imports.get(rest[0]);
  if (imported && hops < 8) {
    // Followed in the module that imports it, where its path means what it says.
    const target = resolve(modules, at, [...imported, ...rest.slice(1)], hops + 1);
    if (target) return target;
  }
  return modules.has(at) ? at : null;
}

const holds = (outer, inner) => inner === outer || inner.startsWith(`${outer}::`);

/** Edges between modules, with one path that makes each, for the report. */
function edges(modules) {
  const out = new Map();
  for (const m of modules.values()) {
    for (const path of m.paths) {
      const to = resolve(modules, m.path, path);
      if (!to || holds(to, m.path) || holds(m.path, to)) continue;
      if (!out.has(m.path)) out.set(m.path, new Map());
      if (!out.get(m.path).has(to)) out.get(m.path).set(to, path.join('::'));
    }
  }
  return out;
}

/** Strongly connected components of more than one module (Tarjan). */
function cycles(graph) {
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const stack = [];
  const on = new Set();
  const found = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const scc = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) found.push(scc);
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return found;
}

let failed = false;
for (const dir of process.argv.slice(2)) {
  const modules = crateModules(dir);
  const graph = edges(modules);
  const count = [...graph.values()].reduce((s, e) => s + e.size, 0);
  const found = cycles(graph);
  console.log(`${dir}: ${modules.size} modules, ${count} edges, ${found.length} cycles`);
  for (const scc of found) {
    failed = true;
    console.log(`  cycle: ${scc.join(', ')}`);
    for (const from of scc) {
      for (const [to, via] of graph.get(from) ?? []) {
        if (scc.includes(to)) console.log(`    ${from} -> ${to} (${via})`);
      }
    }
  }
}
process.exit(failed ? 1 : 0);
