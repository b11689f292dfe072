/**
 * What the limits say over HTTP: the rate-limit fields of draft-ietf-httpapi-ratelimit-headers
 * (-10/-11 syntax: Structured Field lists, RFC 8941), and refusals as problem details
 * (RFC 9457, `application/problem+json`).
 *
 *   RateLimit-Policy: "<name>";q=<limit>;w=<window seconds>
 *   RateLimit: "<name>";r=<remaining>;t=<seconds until the quota is back>
 *
 * Several limiters on one route each append their member to the two lists (a header line each,
 * which HTTP reads as one comma-separated list); none overwrites another's.
 */
import type { ServerResponse } from 'node:http';
import { rangeError, typeError } from '../errors.js';

/** A limit's name: a Structured Field string, printable ASCII without `"` or `\`. */
export function checkName(value: unknown, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string') throw typeError('name', 'a string', value);
  if (!/^[\x20-\x21\x23-\x5b\x5d-\x7e]{1,64}$/.test(value)) {
    throw rangeError('name', 'printable ASCII without " or \\, 1 to 64 characters', value);
  }
  return value;
}

/** Appends a member to a list field, after any other limiter's. */
function append(res: ServerResponse, field: string, member: string): void {
  if (res.headersSent) return;
  res.appendHeader(field, member);
}

/** The policy and the current state of one limiter, on any response. */
export function rateLimitFields(
  res: ServerResponse,
  name: string,
  limit: number,
  windowMs: number,
  remaining: number,
  resetMs: number,
): void {
  append(
    res,
    'RateLimit-Policy',
    `"${name}";q=${limit};w=${Math.max(1, Math.ceil(windowMs / 1000))}`,
  );
  append(res, 'RateLimit', `"${name}";r=${remaining};t=${Math.ceil(resetMs / 1000)}`);
}

/** Whole seconds, at least 1, for Retry-After (an Infinity: a day, the request never passes). */
export function retryAfterSeconds(ms: number): number {
  return Number.isFinite(ms) ? Math.max(1, Math.ceil(ms / 1000)) : 86_400;
}

/** A refusal: `status`, Retry-After, and a problem+json body; the response is ended. */
export function refuse(
  res: ServerResponse,
  status: number,
  title: string,
  detail: string,
  retryAfterS: number,
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const body = JSON.stringify({ type: 'about:blank', title, status, detail });
  res.statusCode = status;
  res.setHeader('Retry-After', String(retryAfterS));
  res.setHeader('Content-Type', 'application/problem+json');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}
