/**
 * What the limits say over HTTP: the rate-limit fields of draft-ietf-httpapi-ratelimit-headers
 * (-10/-11 syntax: Structured Field lists, RFC 8941), and refusals as problem details
 * (RFC 9457, `application/problem+json`).
 *
 *   RateLimit-Policy: "<name>";q=<limit>;w=<window seconds>
 *   RateLimit: "<name>";r=<remaining>;t=<seconds until the quota is back>
 *
 * Several limiters on one route each add their member to the two lists; none overwrites
 * another's.
 */
import type { ServerResponse } from 'node:http';
import { rangeError, typeError } from '../core.js';

/** A refusal, whatever the framework that sends it. */
export interface Refusal {
  status: number;
  title: string;
  detail: string;
  retryAfterS: number;
}

/** A limit's name: a Structured Field string, printable ASCII without `"` or `\`. */
export function checkName(value: unknown, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string') throw typeError('name', 'a string', value);
  if (!/^[\x20-\x21\x23-\x5b\x5d-\x7e]{1,64}$/.test(value)) {
    throw rangeError('name', 'printable ASCII without " or \\, 1 to 64 characters', value);
  }
  return value;
}

/** A list field with `member` added after what other limiters put there. */
export function withMember(existing: unknown, member: string): string {
  if (existing === undefined || existing === '') return member;
  return `${Array.isArray(existing) ? existing.join(', ') : String(existing)}, ${member}`;
}

/** Adds a member to a list field of a node:http response. */
export function setField(res: ServerResponse, field: string, member: string): void {
  if (res.headersSent) return;
  res.setHeader(field, withMember(res.getHeader(field), member));
}

/** Whole seconds, at least 1, for Retry-After (an Infinity: a day, the request never passes). */
export function retryAfterSeconds(ms: number): number {
  return Number.isFinite(ms) ? Math.max(1, Math.ceil(ms / 1000)) : 86_400;
}

/** The problem+json body of a refusal. */
export function problemBody(refusal: Refusal): string {
  const { status, title, detail } = refusal;
  return JSON.stringify({ type: 'about:blank', title, status, detail });
}

/** Sends a refusal on a node:http response, and ends it. */
export function refuse(res: ServerResponse, refusal: Refusal): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const body = problemBody(refusal);
  res.statusCode = refusal.status;
  res.setHeader('Retry-After', String(refusal.retryAfterS));
  res.setHeader('Content-Type', 'application/problem+json');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}
