/**
 * A route's hooks of one kind with `hook` added last. Policies that apply to some routes only
 * (response cache, Idempotency-Key) add their hooks to those routes from an onRoute hook, so a
 * request pays only for the policies its route declares.
 */
export function withHook<H>(existing: H | H[] | undefined, hook: H): H[] {
  if (existing === undefined) return [hook];
  return Array.isArray(existing) ? [...existing, hook] : [existing, hook];
}
