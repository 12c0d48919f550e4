// What a call is and how it is sent: the same rules as the Python SDK
// (src/hindsight/client/_call.py and _sending.py), so both clients behave alike under failure.

/** HTTP statuses that mean "not done, try again": the server refused before acting. */
export const TRANSIENT_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

/** The service answered with an error; `message` is the server's own, saying what to fix. */
export class APIError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;

  constructor(status: number, code: string, message: string, details?: unknown) {
    super(message);
    this.name = "APIError";
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/** The service could not be reached (after retries), or its answer was cut off. */
export class TransportError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "TransportError";
  }
}

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
export type QueryValue = string | number | boolean | null | undefined | ReadonlyArray<string>;

export interface Call<T> {
  method: Method;
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
  headers?: Record<string, string>;
  /**
   * Safe to send again when the outcome is unknown (a timeout after sending): reads, recall,
   * and writes that carry an idempotency key.
   */
  idempotent: boolean;
  /** The body is not one JSON document (JSON lines): `parse` gets the text. */
  text?: boolean;
  parse: (body: unknown) => T;
}

/** Milliseconds to wait before attempt `attempt + 1`: the server's Retry-After if it sent
 * one (at most 30 s), else exponential with jitter (at most 8 s). */
export function backoffMs(attempt: number, response?: Response): number {
  const after = response?.headers.get("retry-after");
  if (after && /^\d+(\.\d+)?$/.test(after)) {
    return Math.min(Number(after), 30) * 1000;
  }
  return Math.min(8, 0.25 * 2 ** attempt) * (0.5 + Math.random() / 2) * 1000;
}

// Socket errors that mean the request never left: fetch (undici) wraps them in `cause`.
const NEVER_SENT = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
]);

export function neverSent(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && NEVER_SENT.has(code)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Transient only: the server said so (429, 502, 503, 504), or the request never left
 * (cannot connect). A timeout or a dropped connection after sending is retried only for
 * calls that are safe to repeat.
 */
/** Error codes no wait makes pass: the operator must configure something first (e.g.
 * extraction without an LLM answers 503 `not_configured`). */
export const PERMANENT_CODES: ReadonlySet<string> = new Set(["not_configured"]);

/** A transient status whose error code says it is not transient after all. */
export async function permanent(response: Response): Promise<boolean> {
  if (!TRANSIENT_STATUSES.has(response.status)) return false;
  try {
    const body = (await response.clone().json()) as { error?: { code?: unknown } } | null;
    return PERMANENT_CODES.has(String(body?.error?.code));
  } catch {
    return false;
  }
}

export function retryable<T>(call: Call<T>, response?: Response, error?: unknown): boolean {
  if (response) return TRANSIENT_STATUSES.has(response.status);
  return neverSent(error) || call.idempotent;
}

export async function errorFrom(response: Response): Promise<APIError> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; details?: unknown } };
    const error = body && typeof body === "object" ? (body.error ?? {}) : {};
    return new APIError(
      response.status,
      String(error.code ?? "error"),
      String(error.message ?? text),
      error.details,
    );
  } catch {
    return new APIError(response.status, "error", text || response.statusText);
  }
}

export async function result<T>(call: Call<T>, response: Response): Promise<T> {
  if (response.status >= 400) throw await errorFrom(response);
  const text = await response.text();
  if (call.text) return call.parse(text);
  return call.parse(response.status === 204 || !text ? undefined : JSON.parse(text));
}

export function idempotencyKey(): string {
  // Letters only: a run of 13+ digits in a hex key can pass the Luhn check, and the server
  // refuses an idempotency key that looks like a card number (32 letters: 150 bits).
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  return "sdk-" + Array.from(bytes, (b) => String.fromCharCode(97 + (b % 26))).join("");
}
