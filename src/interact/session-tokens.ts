// The three bearer tokens of a browser session's URLs. Each URL is the permission it grants (the
// CDP proxy, the read-only live view, the interactive live view), so each is its own unguessable
// random string, and a holder of one cannot derive another.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** 192 random bits each (≥128 asked), base64url: 32 URL-safe characters. */
const TOKEN_BYTES = 24;

export interface SessionTokenSet {
  /** Opens the CDP proxy (cdpUrl). */
  readonly cdp: string;
  /** Opens the read-only live view (liveViewUrl). */
  readonly view: string;
  /** Opens the live view that forwards mouse and keyboard (interactiveLiveViewUrl). */
  readonly interactive: string;
}

/** What a live view token grants. */
export type LiveAccess = 'view' | 'interactive';

export const SessionTokens = {
  make(): SessionTokenSet {
    const token = () => randomBytes(TOKEN_BYTES).toString('base64url');
    return { cdp: token(), view: token(), interactive: token() };
  },

  /**
   * Whether `given` is `expected`, in time independent of where they differ. Both are hashed
   * first, so the comparison also takes the same time whatever the length of `given`.
   */
  check(expected: string, given: unknown): boolean {
    if (typeof given !== 'string' || !expected) return false;
    const digest = (s: string) => createHash('sha256').update(s).digest();
    return timingSafeEqual(digest(expected), digest(given));
  },

  /** Which live view `given` opens, if any (both are compared, so timing tells nothing either). */
  liveAccess(tokens: SessionTokenSet, given: unknown): LiveAccess | undefined {
    const interactive = SessionTokens.check(tokens.interactive, given);
    const view = SessionTokens.check(tokens.view, given);
    return interactive ? 'interactive' : view ? 'view' : undefined;
  },
};
