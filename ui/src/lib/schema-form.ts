// A tool's input schema as form fields, for the tool tester: strings, numbers, integers,
// booleans, enums and arrays of strings. A schema with anything else is edited as raw JSON.

export type FieldKind = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'strings';

export interface FormField {
  name: string;
  kind: FieldKind;
  required: boolean;
  description?: string;
  /** For `enum`: the allowed values. */
  options?: (string | number | boolean)[];
  default?: unknown;
}

/** The fields of an object schema, or why the form cannot show it (then: raw JSON). */
export type FormPlan = { fields: FormField[] } | { raw: string };

type Schema = Record<string, unknown>;

const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `type` of a property, with `["string", "null"]` read as `string`. */
function typeOf(schema: Schema): string | undefined {
  const t = schema.type;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) {
    const kinds = t.filter((k) => k !== 'null');
    return kinds.length === 1 && typeof kinds[0] === 'string' ? kinds[0] : undefined;
  }
  return undefined;
}

function kindOf(schema: Schema): FieldKind | null {
  if (Array.isArray(schema.enum) && schema.enum.length > 0 && schema.enum.every((v) => ['string', 'number', 'boolean'].includes(typeof v))) {
    return 'enum';
  }
  const t = typeOf(schema);
  if (t === 'string' || t === 'number' || t === 'integer' || t === 'boolean') return t;
  if (t === 'array' && isObject(schema.items) && typeOf(schema.items) === 'string' && !Array.isArray(schema.items.enum)) return 'strings';
  return null;
}

export function planForm(schema: unknown): FormPlan {
  if (!isObject(schema)) return { raw: 'The tool has no input schema.' };
  if (schema.type !== undefined && typeOf(schema) !== 'object') return { raw: 'The input is not an object.' };
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : []);
  const fields: FormField[] = [];
  const others: string[] = [];
  for (const [name, raw] of Object.entries(properties)) {
    const prop = isObject(raw) ? raw : {};
    const kind = kindOf(prop);
    if (!kind) {
      others.push(name);
      continue;
    }
    const field: FormField = { name, kind, required: required.has(name) };
    if (typeof prop.description === 'string') field.description = prop.description;
    if (kind === 'enum') field.options = prop.enum as (string | number | boolean)[];
    if (prop.default !== undefined) field.default = prop.default;
    fields.push(field);
  }
  if (others.length) return { raw: `The form cannot show ${others.map((o) => `“${o}”`).join(', ')}: edit the arguments as JSON.` };
  return { fields };
}

/** What a person typed: text for most fields, a checkbox state for required booleans. */
export type FieldValue = string | boolean;

/** The arguments the fields make, or the first problem with them (named for the person). */
export function collectArguments(fields: FormField[], values: Record<string, FieldValue>): { args: Record<string, unknown> } | { error: string } {
  const args: Record<string, unknown> = {};
  for (const field of fields) {
    const value = values[field.name];
    if (typeof value === 'boolean') {
      args[field.name] = value;
      continue;
    }
    const text = (value ?? '').trim();
    if (text === '') {
      if (field.required && field.kind !== 'strings') return { error: `${field.name} is required.` };
      if (field.required) args[field.name] = [];
      continue;
    }
    switch (field.kind) {
      case 'string':
        args[field.name] = value;
        break;
      case 'number':
      case 'integer': {
        const n = Number(text);
        if (!Number.isFinite(n)) return { error: `${field.name} must be a number, not “${text}”.` };
        if (field.kind === 'integer' && !Number.isInteger(n)) return { error: `${field.name} must be a whole number, not ${text}.` };
        args[field.name] = n;
        break;
      }
      case 'boolean':
        args[field.name] = text === 'true';
        break;
      case 'enum': {
        const option = (field.options ?? []).find((o) => String(o) === text);
        if (option === undefined) return { error: `${field.name} must be one of ${(field.options ?? []).join(', ')}.` };
        args[field.name] = option;
        break;
      }
      case 'strings':
        args[field.name] = text.split('\n').map((l) => l.trim()).filter(Boolean);
        break;
    }
  }
  return { args };
}

/** Raw JSON arguments, checked before anything is sent: a JSON object or nothing. */
export function parseRawArguments(text: string): { args: Record<string, unknown> } | { error: string } {
  if (!text.trim()) return { args: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { error: `Not valid JSON: ${error instanceof Error ? error.message : String(error)}. Nothing was sent.` };
  }
  if (!isObject(parsed)) return { error: 'The arguments must be a JSON object, like {"a": 1}. Nothing was sent.' };
  return { args: parsed };
}

/** A field's starting text: its default, else empty. */
export function initialValue(field: FormField): FieldValue {
  if (field.kind === 'boolean' && field.required) return field.default === true;
  if (field.default === undefined || field.default === null) return '';
  if (field.kind === 'strings' && Array.isArray(field.default)) return field.default.map(String).join('\n');
  return typeof field.default === 'object' ? '' : String(field.default);
}
