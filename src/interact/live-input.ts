// The input messages an interactive viewer sends (JSON text frames), checked before dispatch.
// Positions are fractions (0..1) of the frame as shown, so the viewer need not know the page's
// viewport: the server scales them to it (live-view.ts).
import { z } from 'zod';

const fraction = z.number().min(0).max(1);
/** CDP's bit field: Alt 1, Ctrl 2, Meta 4, Shift 8. */
const modifiers = z.number().int().min(0).max(15).default(0);

export const liveInput = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('mouse'),
    action: z.enum(['down', 'up', 'move']),
    x: fraction,
    y: fraction,
    button: z.enum(['none', 'left', 'middle', 'right', 'back', 'forward']).default('none'),
    /** Buttons held, CDP's bit field: left 1, right 2, middle 4, back 8, forward 16. */
    buttons: z.number().int().min(0).max(31).default(0),
    clickCount: z.number().int().min(0).max(3).default(0),
    modifiers,
  }),
  z.object({
    type: z.literal('wheel'),
    x: fraction,
    y: fraction,
    deltaX: z.number().min(-10_000).max(10_000),
    deltaY: z.number().min(-10_000).max(10_000),
    modifiers,
  }),
  z.object({
    type: z.literal('key'),
    action: z.enum(['down', 'up']),
    /** KeyboardEvent.key, .code and .keyCode of the viewer's event. */
    key: z.string().min(1).max(32),
    code: z.string().max(32).default(''),
    keyCode: z.number().int().min(0).max(255).default(0),
    /** What the key types ('\r' for Enter), absent for keys that type nothing. */
    text: z.string().min(1).max(4).optional(),
    modifiers,
  }),
  /** Text typed at once (a paste, a composed character). */
  z.object({ type: z.literal('text'), text: z.string().min(1).max(10_000) }),
]);

export type LiveInput = z.infer<typeof liveInput>;
