import { ValidationError } from '../core/errors.js';
import type { RouteSpec, QueryParam } from './route-spec.js';
import { validate, type Problem } from './schema.js';

/** What a query value must look like, for the error when it does not. */
function expectation(param: QueryParam): string {
  if (param.expects) return param.expects;
  const s = param.schema;
  if (s.enum) return `one of ${s.enum.join(', ')}`;
  if (s.type === 'integer') return 'a whole number';
  if (s.format === 'date-time') return 'a time such as 2024-05-01T12:00:00Z';
  return 'a text';
}

/** The value of a query parameter as its schema sees it (query values are all text). */
export function queryValue(param: QueryParam, text: string): unknown {
  if (param.schema.type === 'integer') return /^-?\d{1,15}$/.test(text) ? Number(text) : text;
  return text;
}

export function checkQuery(spec: RouteSpec, method: string, pattern: string, query: URLSearchParams): void {
  const declared = spec.query ?? {};
  for (const name of new Set(query.keys())) {
    const param = declared[name];
    const shown = JSON.stringify(name.slice(0, 40));
    if (!param) {
      const known = Object.keys(declared);
      throw new ValidationError(
        `Unknown query parameter ${shown}.`,
        known.length
          ? `${method} ${pattern} takes ${known.join(', ')} (see /v1/openapi.json).`
          : `${method} ${pattern} takes no query parameter.`,
      );
    }
    const values = query.getAll(name);
    if (values.length > 1) throw new ValidationError(`The query parameter ${name} is given ${values.length} times; give it once.`);
    const text = values[0]!;
    if (validate(param.schema, queryValue(param, text), name).length > 0) {
      throw new ValidationError(`${name} must be ${expectation(param)}, not ${JSON.stringify(text.slice(0, 80))}.`);
    }
  }
}

/** The declared query parameters a request gave, as their schemas read them (after checkQuery). */
export function queryValues(spec: RouteSpec, query: URLSearchParams): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [name, param] of Object.entries(spec.query ?? {})) {
    const text = query.get(name);
    if (text !== null) values[name] = queryValue(param, text);
  }
  return values;
}

function describeProblem(problem: Problem, spec: RouteSpec, method: string, pattern: string): ValidationError {
  const field = problem.at.replace(/^body\.?/, '');
  const fields = Object.keys(spec.body?.properties ?? {});
  switch (problem.kind) {
    case 'unknown':
      return new ValidationError(
        `Unknown field ${JSON.stringify(field.slice(0, 60))} in the request body.`,
        fields.length ? `${method} ${pattern} takes ${fields.join(', ')} (see /v1/openapi.json).` : `${method} ${pattern} takes no field.`,
      );
    case 'missing': {
      const property = spec.body?.properties?.[field];
      return new ValidationError(`Missing field ${JSON.stringify(field)}.`, property?.description);
    }
    default:
      return field
        ? new ValidationError(`Field ${JSON.stringify(field)} ${problem.message}.`)
        : new ValidationError(`The request body ${problem.message}.`);
  }
}

/** Refuses a JSON body that does not fit the route's schema, saying the first thing wrong. */
export function checkBody(spec: RouteSpec, method: string, pattern: string, body: Record<string, unknown>): void {
  if (!spec.body) {
    if (Object.keys(body).length > 0) throw new ValidationError(`${method} ${pattern} takes no request body.`);
    return;
  }
  const problems = validate(spec.body, body, 'body');
  if (problems.length > 0) throw describeProblem(problems[0]!, spec, method, pattern);
}
