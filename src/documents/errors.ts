// Errors of document parsing, with stable codes (the routes map them to HTTP statuses).
export type DocumentErrorCode =
  /** The bytes are not a valid file of the detected type (corrupt, truncated). */
  | 'DOCUMENT_CORRUPT'
  /** Password-protected or encrypted content that cannot be read without a key. */
  | 'DOCUMENT_ENCRYPTED'
  /** Decompressed content over the bound (zip bomb guard) or too many parts. */
  | 'DOCUMENT_TOO_LARGE'
  /** A type Gleaner does not parse (the message names it). */
  | 'DOCUMENT_UNSUPPORTED'
  /** Parsing took longer than allowed, or was aborted. */
  | 'DOCUMENT_TIMEOUT';

export class DocumentError extends Error {
  readonly code: DocumentErrorCode;
  constructor(code: DocumentErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DocumentError';
    this.code = code;
  }
}
