/**
 * The JSON Schema subset the API describes itself with: the same objects validate requests
 * (src/api/request-validation.ts), appear in the OpenAPI document (src/api/openapi.ts) and check
 * responses in the contract test, so the three cannot disagree.
 */
export type SchemaType = 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object' | 'null';

export interface Schema {
  type?: SchemaType | SchemaType[];
  description?: string;
  enum?: readonly (string | number | boolean | null)[];
  format?: 'date-time';
  pattern?: string;
  minimum?: number;
  maximum?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: readonly string[];
  /** false: no other field (the default of obj()); a schema: every other field's value. */
  additionalProperties?: boolean | Schema;
  /** Valid when one of these is. */
  anyOf?: Schema[];
  /** A reference into the document's components (only in the served document). */
  $ref?: string;
}

declare const valueType: unique symbol;

/**
 * A schema that also tells the compiler the type of the values it accepts (never present at
 * run time): the builders below return one, so a route's body and answer are typed from the
 * very schemas the router validates them with.
 */
export type Typed<T> = Schema & { readonly [valueType]?: T };

/** The type of the values a schema accepts (`unknown` for a schema built by hand). */
export type Infer<S> = S extends { readonly [valueType]?: infer T } ? (unknown extends T ? unknown : T) : unknown;

type Flat<T> = { [K in keyof T]: T[K] } & {};

/** Schemas named here become components of the document, referenced where they are used. */
const names = new WeakMap<Schema, string>();

export function named<S extends Schema>(name: string, schema: S): S {
  names.set(schema, name);
  return schema;
}

export function nameOf(schema: Schema): string | undefined {
  return names.get(schema);
}

export const str = (description?: string, extra: Partial<Schema> = {}): Typed<string> => ({
  type: 'string',
  ...(description ? { description } : {}),
  ...extra,
});
export const time = (description?: string): Typed<string> => str(description, { format: 'date-time' });
export const int = (description?: string, extra: Partial<Schema> = {}): Typed<number> => ({
  type: 'integer',
  ...(description ? { description } : {}),
  ...extra,
});
export const num = (description?: string): Typed<number> => ({ type: 'number', ...(description ? { description } : {}) });
export const bool = (description?: string): Typed<boolean> => ({ type: 'boolean', ...(description ? { description } : {}) });
export const oneOf = <const V extends readonly string[]>(values: V, description?: string): Typed<V[number]> =>
  str(description, { enum: values });
export const arr = <S extends Schema>(items: S, description?: string): Typed<readonly Infer<S>[]> => ({
  type: 'array',
  items,
  ...(description ? { description } : {}),
});

/** An object with exactly these fields; `optional` lists those that may be absent. */
export function obj<P extends Record<string, Schema>, const O extends keyof P & string = never>(
  properties: P,
  optional: readonly O[] = [],
  description?: string,
): Typed<Flat<{ [K in Exclude<keyof P, O>]: Infer<P[K]> } & { [K in O]?: Infer<P[K]> }>> {
  return {
    type: 'object',
    properties,
    required: Object.keys(properties).filter((k) => !optional.includes(k as O)),
    additionalProperties: false,
    ...(description ? { description } : {}),
  };
}

/** The same schema, also accepting null. */
export function nullable<S extends Schema>(schema: S): Typed<Infer<S> | null> {
  return { anyOf: [schema, { type: 'null' }] };
}

/** A map of free-form keys to one kind of value. */
export function mapOf<S extends Schema>(values: S, description?: string): Typed<Record<string, Infer<S>>> {
  return { type: 'object', additionalProperties: values, ...(description ? { description } : {}) };
}

export interface Problem {
  /** Where: `body.env[2].name`, `query.lines`. */
  at: string;
  /** What is wrong, as a sentence end: `must be a string`. */
  message: string;
  /** The field that is missing or unknown, when that is the problem. */
  kind: 'type' | 'missing' | 'unknown' | 'value';
}

function typeOf(value: unknown): SchemaType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value as SchemaType;
}

function describeTypes(types: SchemaType[]): string {
  const words: Record<SchemaType, string> = {
    string: 'a string',
    integer: 'a whole number',
    number: 'a number',
    boolean: 'true or false',
    array: 'an array',
    object: 'an object',
    null: 'null',
  };
  return types.map((t) => words[t]).join(' or ');
}

/**
 * Every way `value` fails `schema` (empty when it fits). `root` resolves `$ref`s of a served
 * document; schemas built in code have none.
 */
export function validate(
  schema: Schema,
  value: unknown,
  at: string,
  root?: { components?: { schemas?: Record<string, Schema> } },
): Problem[] {
  if (schema.$ref) {
    const name = /^#\/components\/schemas\/(.+)$/.exec(schema.$ref)?.[1];
    const target = name ? root?.components?.schemas?.[name] : undefined;
    if (!target) return [{ at, message: `refers to ${schema.$ref}, which the document lacks`, kind: 'type' }];
    return validate(target, value, at, root);
  }
  if (schema.anyOf) {
    const fits = schema.anyOf.map((alternative) => validate(alternative, value, at, root));
    if (fits.some((p) => p.length === 0)) return [];
    // The alternative of the value's own type says best what is wrong.
    const sameType = fits.find((p) => p.every((problem) => problem.kind !== 'type'));
    return sameType ?? fits[0]!;
  }
  const types = schema.type === undefined ? undefined : Array.isArray(schema.type) ? schema.type : [schema.type];
  const actual = typeOf(value);
  if (types && !types.includes(actual) && !(actual === 'integer' && types.includes('number'))) {
    return [{ at, message: `must be ${describeTypes(types)}`, kind: 'type' }];
  }
  const problems: Problem[] = [];
  if (schema.enum && !schema.enum.includes(value as never)) {
    problems.push({ at, message: `must be one of ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}`, kind: 'value' });
  }
  if (typeof value === 'string') {
    if (schema.pattern && !new RegExp(schema.pattern).test(value))
      problems.push({ at, message: `must match ${schema.pattern}`, kind: 'value' });
    if (schema.format === 'date-time' && Number.isNaN(Date.parse(value)))
      problems.push({ at, message: 'must be a time such as 2024-05-01T12:00:00Z', kind: 'value' });
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum)
      problems.push({ at, message: `must be at least ${schema.minimum}`, kind: 'value' });
    if (schema.maximum !== undefined && value > schema.maximum)
      problems.push({ at, message: `must be at most ${schema.maximum}`, kind: 'value' });
  }
  if (Array.isArray(value) && schema.items) {
    for (const [i, item] of value.entries()) problems.push(...validate(schema.items!, item, `${at}[${i}]`, root));
  }
  if (actual === 'object' && (schema.properties || schema.additionalProperties !== undefined)) {
    const record = value as Record<string, unknown>;
    for (const name of schema.required ?? []) {
      if (record[name] === undefined) problems.push({ at: `${at}.${name}`, message: 'is missing', kind: 'missing' });
    }
    for (const [name, item] of Object.entries(record)) {
      const property = schema.properties?.[name];
      if (property) {
        if (item !== undefined) problems.push(...validate(property, item, `${at}.${name}`, root));
      } else if (schema.additionalProperties === false) {
        problems.push({ at: `${at}.${name}`, message: 'is not a field of this object', kind: 'unknown' });
      } else if (typeof schema.additionalProperties === 'object') {
        problems.push(...validate(schema.additionalProperties, item, `${at}.${name}`, root));
      }
    }
  }
  return problems;
}
