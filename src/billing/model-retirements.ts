/**
 * Known retirement dates of vendor models on the vendors' own APIs, beside the price data's `deprecated` flag:
 * the price data (@pydantic/genai-prices) marks few models deprecated, and carries no dates, so a configured model
 * its vendor shuts down would otherwise go unnoticed until its requests fail. Each row names the vendor's page it
 * was read from; keep it to what those pages say (docs/configuration.md, Default models, says how to check).
 *
 * A row applies to backends of the vendor's own family (`openai`, `anthropic`, `gemini`): the clouds (Azure,
 * Bedrock, Vertex) retire models on their own schedules.
 */
export interface ModelRetirement {
  /** The backend family whose vendor API retires the model. */
  family: 'openai' | 'anthropic' | 'gemini';
  /** The model id; its dated snapshots (`<id>-2024-08-06`, `<id>-20250929`) are retired with it. */
  model: string;
  /** The shutdown date (YYYY-MM-DD, UTC): requests fail from this day. */
  date: string;
  /** The vendor's page that says so. */
  source: string;
}

const OPENAI = 'https://developers.openai.com/api/docs/deprecations';
const ANTHROPIC = 'https://platform.claude.com/docs/en/about-claude/model-deprecations';
const GEMINI = 'https://ai.google.dev/gemini-api/docs/deprecations';

export const KNOWN_RETIREMENTS: readonly ModelRetirement[] = [
  { family: 'openai', model: 'o4-mini', date: '2026-10-23', source: OPENAI },
  { family: 'openai', model: 'o3-mini', date: '2026-10-23', source: OPENAI },
  { family: 'openai', model: 'gpt-4.1-nano', date: '2026-10-23', source: OPENAI },
  { family: 'openai', model: 'gpt-5', date: '2026-12-11', source: OPENAI },
  { family: 'openai', model: 'gpt-5-mini', date: '2026-12-11', source: OPENAI },
  { family: 'openai', model: 'gpt-5-nano', date: '2026-12-11', source: OPENAI },
  { family: 'openai', model: 'o3', date: '2026-12-11', source: OPENAI },
  { family: 'openai', model: 'gpt-4o', date: '2027-01-14', source: OPENAI },
  { family: 'openai', model: 'gpt-4o-mini', date: '2027-01-14', source: OPENAI },
  { family: 'openai', model: 'gpt-4.1', date: '2027-01-14', source: OPENAI },
  { family: 'openai', model: 'gpt-4.1-mini', date: '2027-01-14', source: OPENAI },
  { family: 'anthropic', model: 'claude-opus-4-1', date: '2026-08-05', source: ANTHROPIC },
  { family: 'anthropic', model: 'claude-sonnet-4-5', date: '2026-11-30', source: ANTHROPIC },
  { family: 'gemini', model: 'gemini-2.5-flash', date: '2026-12-01', source: GEMINI },
  { family: 'gemini', model: 'gemini-2.5-pro', date: '2026-12-01', source: GEMINI },
];

/** A configured model's retirement as the admin view shows it. */
export interface RetirementNotice {
  /** `retired`: past its date; `retiring`: within RETIREMENT_WARNING_DAYS; `scheduled`: later. */
  status: 'retired' | 'retiring' | 'scheduled';
  date: string;
  source: string;
}

/** How long before its date a retiring model is warned of at start (the admin view shows every known date). */
export const RETIREMENT_WARNING_DAYS = 90;

const DAY_MS = 24 * 60 * 60 * 1000;

/** The known retirement of `model` served by a backend of `family`, as of `now`; undefined when none is known. */
export function retirementOf(
  family: string,
  model: string,
  now: Date,
  table: readonly ModelRetirement[] = KNOWN_RETIREMENTS,
): RetirementNotice | undefined {
  const row = table.find((candidate) => candidate.family === family && isSnapshotOf(model, candidate.model));
  if (!row) return undefined;
  const shutdown = Date.parse(`${row.date}T00:00:00Z`);
  const status =
    now.getTime() >= shutdown
      ? 'retired'
      : shutdown - now.getTime() <= RETIREMENT_WARNING_DAYS * DAY_MS
        ? 'retiring'
        : 'scheduled';
  return { status, date: row.date, source: row.source };
}

/** The id itself, or a dated snapshot of it (OpenAI's `-YYYY-MM-DD`, Anthropic's `-YYYYMMDD`): not `gpt-4o-mini` for `gpt-4o`. */
function isSnapshotOf(model: string, id: string): boolean {
  if (model === id) return true;
  if (!model.startsWith(`${id}-`)) return false;
  return /^(?:\d{4}-\d{2}-\d{2}|\d{8})$/.test(model.slice(id.length + 1));
}
