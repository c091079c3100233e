/**
 * The members Gemini's GenerateContentRequest defines (Generative Language API v1beta reference), for the
 * stand-in to refuse any other as Gemini does: its protobuf JSON parser answers 400 INVALID_ARGUMENT
 * `Invalid JSON payload received. Unknown name "<name>" at '<path>': Cannot find field.` (the path in the proto's
 * snake_case names). Names are accepted in lowerCamelCase or snake_case, as the parser accepts both. Inside
 * `parametersJsonSchema`, `responseJsonSchema` and `args`/`response` of function parts anything goes (JSON values).
 */
type Shape = { [member: string]: Shape | 'any' | { list: Shape } | { map: Shape } };

const schema: Shape = {};
Object.assign(schema, {
  type: 'any',
  format: 'any',
  title: 'any',
  description: 'any',
  nullable: 'any',
  enum: 'any',
  maxItems: 'any',
  minItems: 'any',
  properties: { map: schema },
  required: 'any',
  minProperties: 'any',
  maxProperties: 'any',
  minLength: 'any',
  maxLength: 'any',
  pattern: 'any',
  example: 'any',
  anyOf: { list: schema },
  propertyOrdering: 'any',
  default: 'any',
  items: schema,
  minimum: 'any',
  maximum: 'any',
});

const part: Shape = {
  text: 'any',
  inlineData: { mimeType: 'any', data: 'any' },
  fileData: { mimeType: 'any', fileUri: 'any' },
  functionCall: { id: 'any', name: 'any', args: 'any' },
  functionResponse: {
    id: 'any',
    name: 'any',
    response: 'any',
    parts: 'any',
    willContinue: 'any',
    scheduling: 'any',
  },
  executableCode: 'any',
  codeExecutionResult: 'any',
  thought: 'any',
  thoughtSignature: 'any',
  videoMetadata: 'any',
  partMetadata: 'any',
  mediaResolution: 'any',
};
const content: Shape = { role: 'any', parts: { list: part } };

const request: Shape = {
  model: 'any',
  contents: { list: content },
  systemInstruction: content,
  tools: {
    list: {
      functionDeclarations: {
        list: {
          name: 'any',
          description: 'any',
          behavior: 'any',
          parameters: schema,
          parametersJsonSchema: 'any',
          response: schema,
          responseJsonSchema: 'any',
        },
      },
      googleSearchRetrieval: 'any',
      codeExecution: 'any',
      googleSearch: 'any',
      urlContext: 'any',
      computerUse: 'any',
      fileSearch: 'any',
      googleMaps: 'any',
    },
  },
  toolConfig: {
    functionCallingConfig: { mode: 'any', allowedFunctionNames: 'any' },
    retrievalConfig: 'any',
  },
  safetySettings: { list: { category: 'any', threshold: 'any' } },
  generationConfig: {
    stopSequences: 'any',
    responseMimeType: 'any',
    responseSchema: schema,
    responseJsonSchema: 'any',
    responseModalities: 'any',
    candidateCount: 'any',
    maxOutputTokens: 'any',
    temperature: 'any',
    topP: 'any',
    topK: 'any',
    seed: 'any',
    presencePenalty: 'any',
    frequencyPenalty: 'any',
    responseLogprobs: 'any',
    logprobs: 'any',
    enableEnhancedCivicAnswers: 'any',
    speechConfig: 'any',
    imageConfig: 'any',
    mediaResolution: 'any',
    thinkingConfig: { includeThoughts: 'any', thinkingBudget: 'any', thinkingLevel: 'any' },
  },
  cachedContent: 'any',
};

const camel = (name: string) => name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Gemini's message for the first member of `body` it does not define, or null. */
export function unknownGeminiField(body: unknown): string | null {
  return walk(body, request, '');
}

function walk(value: unknown, shape: Shape, path: string): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null; // type errors: not checked
  for (const [name, member] of Object.entries(value)) {
    const rule = shape[camel(name)];
    const where = path ? `${path}.${snake(camel(name))}` : snake(camel(name));
    if (rule === undefined)
      return `Invalid JSON payload received. Unknown name "${name}"${path ? ` at '${path}'` : ''}: Cannot find field.`;
    if (rule === 'any') continue;
    if ('list' in rule && typeof rule.list === 'object' && Object.keys(rule).length === 1) {
      for (const [i, item] of (Array.isArray(member) ? member : []).entries()) {
        const found = walk(item, rule.list as Shape, `${where}[${i}]`);
        if (found) return found;
      }
    } else if ('map' in rule && typeof rule.map === 'object' && Object.keys(rule).length === 1) {
      for (const [key, item] of Object.entries((member as Record<string, unknown>) ?? {})) {
        const found = walk(item, rule.map as Shape, `${where}[${key}].value`);
        if (found) return found;
      }
    } else {
      const found = walk(member, rule as Shape, where);
      if (found) return found;
    }
  }
  return null;
}
