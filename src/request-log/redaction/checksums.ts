/**
 * The check digits that tell a card number or an IBAN from any other run of digits, so the detectors redact what
 * is one and leave order numbers, ids and amounts alone.
 */

/** The Luhn (mod 10) check of payment card numbers (ISO/IEC 7812-1): `digits` holds digits only. */
export function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/**
 * The IBAN check (ISO 13616, ISO 7064 MOD 97-10): the first four characters moved to the end, letters read as
 * 10..35, the number mod 97 is 1. `iban` holds upper-case letters and digits only, spaces removed.
 */
export function passesIbanCheck(iban: string): boolean {
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const code = char.charCodeAt(0);
    // A digit adds one decimal place, a letter (A = 10 .. Z = 35) two.
    const value = code <= 57 ? code - 48 : code - 55;
    remainder = (remainder * (value > 9 ? 100 : 10) + value) % 97;
  }
  return remainder === 1;
}
