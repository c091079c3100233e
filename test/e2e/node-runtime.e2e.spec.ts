import { execFile } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = join(__dirname, '../..');
const pinned = JSON.parse(readFileSync(join(root, 'scripts/node-runtime.json'), 'utf8')) as {
  version: string;
  integrity: Record<string, string>;
};

/**
 * scripts/with-node.cjs in a scratch checkout whose package.json asks for a Node newer than any (engines >=99), so
 * the Node running this test is "too old" there and the wrapper must fetch the pinned one from the npm registry, as
 * it does on CI's Node 20 machines for the real engines. npm's own cache makes the second fetch a local copy.
 */
const scratch: string[] = [];
afterAll(() => scratch.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function scratchCheckout(integrity?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-with-node-'));
  scratch.push(dir);
  mkdirSync(join(dir, 'scripts'));
  copyFileSync(join(root, 'scripts/with-node.cjs'), join(dir, 'scripts/with-node.cjs'));
  const runtime = { ...pinned, integrity: { ...pinned.integrity } };
  if (integrity) for (const name of Object.keys(runtime.integrity)) runtime.integrity[name] = integrity;
  writeFileSync(join(dir, 'scripts/node-runtime.json'), JSON.stringify(runtime));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ engines: { node: '>=99.0' } }));
  return dir;
}

describe('scripts/with-node.cjs', () => {
  it('package.json asks for Node 22.12 or later, and this test runs on a Node that satisfies it', () => {
    expect(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).engines.node).toBe('>=22.12');
    const [major, minor] = process.versions.node.split('.').map(Number);
    expect(major > 22 || (major === 22 && minor >= 12)).toBe(true);
  });

  it('on a Node older than engines, fetches the pinned Node into .cache/node, says so in one line, and runs the command (and its children) under it', async () => {
    const dir = scratchCheckout();
    const first = await run(
      process.execPath,
      [
        join(dir, 'scripts/with-node.cjs'),
        "node -p process.version && node -e \"require('child_process').execSync('node -p process.version', {stdio: 'inherit'})\"",
      ],
      { cwd: dir, timeout: 240_000 },
    );
    expect(first.stdout.trim().split('\n')).toEqual([`v${pinned.version}`, `v${pinned.version}`]);
    expect(first.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        new RegExp(`fetching Node ${pinned.version.replace(/\./g, '\\.')} from the npm registry`),
      ),
    ]);
    expect(readdirSync(join(dir, '.cache/node'))).toEqual([
      `${pinned.version}-${process.platform}-${process.arch}`,
    ]);

    // The second run uses what the first fetched, and still says which Node it runs on.
    const second = await run(
      process.execPath,
      [join(dir, 'scripts/with-node.cjs'), 'node', '-p', 'process.version'],
      {
        cwd: dir,
        timeout: 60_000,
      },
    );
    expect(second.stdout.trim()).toBe(`v${pinned.version}`);
    expect(second.stderr).toMatch(/^switchyard: running under Node .* from \.cache\/node .*\n$/);
  }, 300_000);

  it('refuses a package whose bytes do not match the pinned integrity, and leaves nothing behind', async () => {
    const dir = scratchCheckout(`sha512-${Buffer.alloc(64).toString('base64')}`);
    const failed = await run(process.execPath, [join(dir, 'scripts/with-node.cjs'), 'node', '--version'], {
      cwd: dir,
      timeout: 240_000,
    }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed?.code).not.toBe(0);
    expect(failed?.stderr).toMatch(/integrity sha512-.*, pinned sha512-AAAA/);
    expect(readdirSync(join(dir, '.cache/node'))).toEqual([]);
  }, 300_000);

  it('passes the exit code through', async () => {
    const failed = await run(
      process.execPath,
      [join(root, 'scripts/with-node.cjs'), 'node', '-e', 'process.exit(7)'],
      {
        cwd: root,
      },
    ).then(
      () => undefined,
      (error: { code: number }) => error,
    );
    expect(failed?.code).toBe(7);
  });
});
