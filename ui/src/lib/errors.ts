// What to do next, for each kind of failure the engine reports. The tables are keyed by the
// kinds generated from Rust (bindings.ts), so a kind added there fails `tsc` until it has a hint.
// They hold catalogue descriptors: translate one where it is shown (`t(PROVIDER_NEXT_STEP[kind])`
// in a component, `nextStep(error)` anywhere else).
import type { MessageDescriptor } from "@lingui/core";
import { msg } from "@lingui/core/macro";
import type { ErrorKind, ProviderErrorKind } from "../bindings";
import { i18n } from "../i18n";

/** After a model provider failed (an answer's error card, a message not sent). */
export const PROVIDER_NEXT_STEP: Record<ProviderErrorKind, MessageDescriptor> = {
  unreachable: msg`Start the model server, or check its URL in Settings → Models.`,
  missing_key: msg`Add a key in Settings → Models.`,
  auth: msg`Check the key in Settings → Models.`,
  rate_limited: msg`Wait a moment, then regenerate.`,
  model_not_found: msg`Pick an installed model in the selector below.`,
  context_too_long: msg`Start a new chat, or pick a model with a longer context.`,
  no_vision: msg`Pick a vision model, or remove the images.`,
  bad_request: msg`The service refused this request; try another model or rephrase.`,
  server: msg`The service had a problem; regenerate in a moment.`,
  stream: msg`Regenerate to try again; the part that arrived is kept.`,
  stalled: msg`Regenerate to try again; the part that arrived is kept.`,
  unknown_provider: msg`Pick a model from the selector, or add the provider in Settings → Models.`,
  local_model: msg`See Settings → Models → Local models; the message says what the model needs.`,
};

/** After any other command failed; `null` where the message says all there is. */
const COMMAND_NEXT_STEP: Record<ErrorKind, MessageDescriptor | null> = {
  not_found: msg`It may have been removed meanwhile; refresh and try again.`,
  invalid: null,
  unavailable: msg`Perch's engine is not running; restart Perch.`,
  storage: msg`Check that the data folder is writable and the disk has room.`,
  window: null,
  external: null,
  provider: null,
  capture: null,
  timeout: msg`It did not answer in time; try again.`,
  cancelled: null,
  not_running: msg`Start the server first (Settings → MCP servers).`,
  closed: msg`The server stopped while working; see its log, then restart it.`,
  needs_sign_in: msg`Sign in to it in Settings → MCP servers, then try again.`,
};

/** The next step for anything a command threw, in the UI's language, or `null` when there is
 * none to add. */
export function nextStep(error: unknown): string | null {
  if (!error || typeof error !== "object" || !("kind" in error)) return null;
  const { kind, provider_kind } = error as { kind: ErrorKind; provider_kind?: ProviderErrorKind | null };
  const step = provider_kind ? PROVIDER_NEXT_STEP[provider_kind] : COMMAND_NEXT_STEP[kind];
  return step ? i18n._(step) : null;
}
