import { timingSafeEqual } from 'node:crypto';

/**
 * Compares two byte strings without an early exit, so the time taken does
 * not reveal where they first differ (needed wherever a MAC/tag is checked
 * in JS, e.g. RFC 5297 §2.7 step "if T = V"). Different lengths return false
 * at once: lengths are public.
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  return timingSafeEqual(a, b);
}
