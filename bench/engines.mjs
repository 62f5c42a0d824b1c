// The three engines the browser tiers and benchmarks run in, and where each one's binary
// is on a machine that ran pkg-scripts/setup.sh. An environment variable overrides each.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';

const FIND = {
  chromium: ['CHROMIUM', () => which('chromium'), 'apt chromium'],
  firefox: ['FIREFOX', () => which('firefox-esr'), 'apt firefox-esr'],
  webkit: ['MINIBROWSER', miniBrowser, 'apt webkit2gtk-driver'],
};

export const ENGINE_NAMES = Object.keys(FIND);

/** /usr/lib/<arch>/webkit2gtk-4.<n>/MiniBrowser, the newest API version if several. */
function miniBrowser() {
  const found = [];
  for (const arch of readdirSync('/usr/lib')) {
    let dirs = [];
    try {
      dirs = readdirSync(`/usr/lib/${arch}`).filter((d) => d.startsWith('webkit2gtk-4.'));
    } catch {
      continue; // a file, not a folder
    }
    for (const dir of dirs) {
      const path = `/usr/lib/${arch}/${dir}/MiniBrowser`;
      if (existsSync(path)) found.push(path);
    }
  }
  return found.sort().at(-1);
}

function which(name) {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

/** The binary of `engine` ('chromium', 'firefox' or 'webkit'). */
export function browserFor(engine) {
  const [variable, find, install] = FIND[engine]
    ?? (() => { throw new Error(`unknown engine ${engine}: expected one of ${ENGINE_NAMES.join(', ')}`); })();
  const path = process.env[variable] ?? find();
  if (!path) throw new Error(`no ${engine} binary found: run pkg-scripts/setup.sh (${install}) or set ${variable}`);
  return path;
}

/**
 * The engine's name and version as the benchmark pages print them ("Firefox 153.8.0esr",
 * "WebKitGTK 2.50.6"), from the binary, or from the Debian package for WebKitGTK, whose
 * MiniBrowser has no --version and whose user agent names a Safari version instead.
 */
export function versionOf(engine, browser = browserFor(engine)) {
  const run = (command, args) => {
    try {
      return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return '';
    }
  };
  if (engine === 'webkit') {
    const api = browser.match(/webkit2gtk-(4\.\d+)/)?.[1];
    const version = api && run('dpkg-query', ['-W', '-f', '${Version}', `libwebkit2gtk-${api}-0`]);
    return `WebKitGTK ${version ? version.replace(/-.*/, '') : '?'}`;
  }
  const version = run(browser, ['--version']).match(/\d+\.[\w.]+/)?.[0];
  return `${engine === 'chromium' ? 'Chromium' : 'Firefox'} ${version ?? '?'}`;
}
