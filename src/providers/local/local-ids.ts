import { randomInt } from 'node:crypto';

const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A random id in OpenAI's style (`chatcmpl-` + 29 letters and digits, `call_` + 24): unique across restarts and
 * replicas (a counter per process repeated itself on every boot), from the CSPRNG so ids do not reveal traffic.
 */
export function randomId(prefix: string, length: number): string {
  let id = prefix;
  for (let i = 0; i < length; i++) id += ID_ALPHABET[randomInt(ID_ALPHABET.length)];
  return id;
}
