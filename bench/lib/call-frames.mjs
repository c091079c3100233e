// Where a profiled function lives, as the profiles (bench/profile.mjs, bench/alloc.mjs) group it: its package
// (node_modules/<name>, scoped names whole), a Node internal (node:...), or its file relative to the checkout.
import { relative } from 'node:path';

export function groupOf(url, root) {
  if (!url) return '(native / gc / idle)';
  const path = url.replace('file://', '');
  const nm = path.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = path.slice(nm + 13).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (path.startsWith('node:')) return path;
  return relative(root, path);
}
