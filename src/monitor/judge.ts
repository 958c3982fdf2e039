// Stand-in until h-mon-pure merges (engineer B's module replaces this file): whether a change is
// meaningful; this stand-in is the deterministic judge only (numbers and dates are noise).
import type { LlmProvider } from '../llm/provider.ts';

export interface Judgment {
  meaningful: boolean;
  reason: string;
  confidence: 'high' | 'medium' | 'low';
  meaningfulChanges: { type: 'added' | 'removed' | 'changed'; before: string; after: string; reason: string }[];
}

export async function judgeChange(
  input: { goal?: string; url: string; previous: string; current: string; diffText: string },
  _llm?: LlmProvider,
): Promise<{ judgment: Judgment; warning?: string; usage?: unknown }> {
  const changed = input.diffText
    .split('\n')
    .filter((l) => /^[+-][^+-]/.test(l))
    .map((l) => l.slice(1));
  const noise = (l: string) => l.replace(/[\d\s:./,-]+|ago|minutes?|hours?|views?|likes?/gi, '').trim() === '';
  const real = changed.filter((l) => !noise(l));
  const meaningfulChanges = real
    .slice(0, 10)
    .map((l) => ({ type: 'changed' as const, before: '', after: l, reason: 'text changed' }));
  return {
    judgment: {
      meaningful: real.length > 0,
      reason: real.length ? 'the text changed' : 'only numbers or dates changed',
      confidence: 'low',
      meaningfulChanges,
    },
    warning: 'No LLM is configured: changes were judged by rules',
  };
}
