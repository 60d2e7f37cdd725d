// What to do next, for each kind of failure the engine reports. The tables are keyed by the
// kinds generated from Rust (bindings.ts), so a kind added there fails `tsc` until it has a hint.
import type { ErrorKind, ProviderErrorKind } from "../bindings";

/** After a model provider failed (an answer's error card, a message not sent). */
export const PROVIDER_NEXT_STEP: Record<ProviderErrorKind, string> = {
  unreachable: "Start the model server, or check its URL in Settings → Models.",
  missing_key: "Add a key in Settings → Models.",
  auth: "Check the key in Settings → Models.",
  rate_limited: "Wait a moment, then regenerate.",
  model_not_found: "Pick an installed model in the selector below.",
  context_too_long: "Start a new chat, or pick a model with a longer context.",
  no_vision: "Pick a vision model, or remove the images.",
  bad_request: "The service refused this request; try another model or rephrase.",
  server: "The service had a problem; regenerate in a moment.",
  stream: "Regenerate to try again; the part that arrived is kept.",
  stalled: "Regenerate to try again; the part that arrived is kept.",
  unknown_provider: "Pick a model from the selector, or add the provider in Settings → Models.",
  local_model: "See Settings → Models → Local models; the message says what the model needs.",
};

/** After any other command failed; `null` where the message says all there is. */
const COMMAND_NEXT_STEP: Record<ErrorKind, string | null> = {
  not_found: "It may have been removed meanwhile; refresh and try again.",
  invalid: null,
  unavailable: "Perch's engine is not running; restart Perch.",
  storage: "Check that the data folder is writable and the disk has room.",
  window: null,
  external: null,
  provider: null,
  capture: null,
  timeout: "It did not answer in time; try again.",
  cancelled: null,
  not_running: "Start the server first (Settings → MCP servers).",
  closed: "The server stopped while working; see its log, then restart it.",
  needs_sign_in: "Sign in to it in Settings → MCP servers, then try again.",
};

/** The next step for anything a command threw, or `null` when there is none to add. */
export function nextStep(error: unknown): string | null {
  if (!error || typeof error !== "object" || !("kind" in error)) return null;
  const { kind, provider_kind } = error as { kind: ErrorKind; provider_kind?: ProviderErrorKind | null };
  if (provider_kind) return PROVIDER_NEXT_STEP[provider_kind] ?? null;
  return COMMAND_NEXT_STEP[kind] ?? null;
}
