// jschardet (a port of Mozilla's universal charset detector) ships no types: the part Gleaner calls.
declare module 'jschardet' {
  export interface Detected {
    /** null when the bytes look like no text at all. */
    encoding: string | null;
    confidence: number;
    language?: string;
  }
  export function detectAll(input: Buffer | string, options?: { minimumThreshold?: number }): Detected[];
  const jschardet: { detectAll: typeof detectAll };
  export default jschardet;
}
