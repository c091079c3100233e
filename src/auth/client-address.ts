import { isIPv4, isIPv6 } from 'node:net';

/**
 * The address a guessing throttle counts a client under: an IPv4 address as it is (an IPv4-mapped IPv6 address
 * as its IPv4 one), an IPv6 address by its /64, the smallest block one host is routinely given (it can take any
 * of 2^64 addresses in it, so counting single IPv6 addresses would not slow it down). Anything else (no address
 * at all: the socket closed) is counted as it came.
 */
export function throttledAddress(ip: string | undefined): string {
  if (!ip) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped && isIPv4(mapped[1])) return mapped[1];
  if (!isIPv6(ip)) return ip;
  const zoneless = ip.split('%')[0];
  return `${expandIPv6(zoneless).slice(0, 4).join(':')}::/64`;
}

/** The eight groups of an IPv6 address, `::` filled in and leading zeros dropped (`2001:db8:0:0:...`). */
function expandIPv6(ip: string): string[] {
  const [head, tail] = ip.includes('::') ? ip.split('::') : [ip, undefined];
  const groups = (part: string | undefined) => (part ? part.split(':') : []);
  // A trailing dotted IPv4 part (::1.2.3.4) stands for the last two groups; only the first four matter here.
  const left = groups(head);
  const right = groups(tail);
  const missing =
    tail === undefined ? 0 : 8 - left.length - right.length - (right.some((g) => g.includes('.')) ? 1 : 0);
  return [...left, ...Array<string>(Math.max(0, missing)).fill('0'), ...right].map((group) =>
    group.includes('.') ? group : (parseInt(group, 16) || 0).toString(16),
  );
}
