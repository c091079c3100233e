import { Command } from 'commander';
import { ceilingLimit, positiveAmount, positiveInt } from '../../src/cli/flag-values';

/** The CLI's number flags refuse what the limits cannot hold exactly, and the refusal names the flag. */
describe('CLI number flags', () => {
  const parse = (flag: string, parser: (value: string) => number, value: string) => {
    const command = new Command()
      .exitOverride()
      .configureOutput({ writeErr: () => undefined })
      .option(`${flag} <n>`, 'a limit', parser);
    command.parse([flag, value], { from: 'user' });
    return command.opts() as Record<string, number>;
  };

  it('takes a limit up to Number.MAX_SAFE_INTEGER and refuses one above it, naming the flag', () => {
    expect(parse('--tpm', positiveInt, String(Number.MAX_SAFE_INTEGER)).tpm).toBe(Number.MAX_SAFE_INTEGER);
    for (const value of ['9007199254740993', '1e300'])
      expect(() => parse('--tpm', positiveInt, value)).toThrow(
        `option '--tpm <n>' argument '${value}' is invalid. "${value}" is more than 9007199254740991`,
      );
    expect(() => parse('--tpm', positiveInt, 'lots')).toThrow(
      /'--tpm <n>'.*"lots" is not a positive integer/,
    );
  });

  it('refuses a budget above what nano-units of the currency can count exactly', () => {
    expect(parse('--budget-per-day', positiveAmount, '9007199.25474').budgetPerDay).toBe(9007199.25474);
    expect(() => parse('--budget-per-day', positiveAmount, '9007200')).toThrow(
      /'--budget-per-day <n>'.*"9007200" is more than 9007199.25474/,
    );
  });

  it('reads --ceiling-limit as <limit>=<n>: by flag or limit name, repeatable, none to drop, each by its unit', () => {
    const command = new Command()
      .exitOverride()
      .configureOutput({ writeErr: () => undefined })
      .option('--ceiling-limit <limit=n>', 'a ceiling limit', ceilingLimit);
    command.parse(
      [
        '--ceiling-limit',
        'rpm=600',
        '--ceiling-limit',
        'tokensPerDay=none',
        '--ceiling-limit',
        'budget-per-day=2.5',
      ],
      { from: 'user' },
    );
    expect(command.opts().ceilingLimit).toEqual({
      requestsPerMinute: 600,
      tokensPerDay: null,
      budgetPerDay: 2.5,
    });
    expect(() => ceilingLimit('rpm=2.5')).toThrow('"2.5" is not a positive integer');
    for (const value of ['rpm', '=5', 'speed=5'])
      expect(() => ceilingLimit(value)).toThrow(
        `"${value}" is not <limit>=<n> with a limit among concurrency, rpm`,
      );
  });
});
