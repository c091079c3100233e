import { randomInt } from 'node:crypto';

const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A random id in the vendors' style (`chatcmpl-` + 29 letters and digits, `call_` + 24, `msg_` + 24), for every id
 * the gateway makes up (a local model's answers, a backend's answer without one): unique across restarts and
 * replicas (a counter per process, or the time, repeated itself), from the CSPRNG so ids do not reveal traffic.
 */
export function randomId(prefix: string, length: number): string {
  let id = prefix;
  for (let i = 0; i < length; i++) id += ID_ALPHABET[randomInt(ID_ALPHABET.length)];
  return id;
}
