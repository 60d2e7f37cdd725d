import type { TurnError } from "../../bindings";

const NEXT_STEP: Record<string, string> = {
  unreachable: "Start the model server, or check its URL in Settings.",
  missing_key: "Add a key in Settings → Models.",
  auth: "Check the key in Settings → Models.",
  rate_limited: "Wait a moment, then regenerate.",
  model_not_found: "Pick an installed model in the selector below.",
  context_too_long: "Start a new chat, or pick a model with a longer context.",
  stream: "Regenerate to try again; the part that arrived is kept.",
  stalled: "Regenerate to try again; the part that arrived is kept.",
  server: "The service had a problem; regenerate in a moment.",
};

/** A failed answer: what happened, and what to do next. */
export function ErrorCard({ error, fallback }: { error: TurnError | null; fallback?: string | null }) {
  const message = error?.message ?? fallback;
  if (!message) return null;
  const next = error ? NEXT_STEP[error.kind] : undefined;
  return (
    <div className="error-card" role="alert">
      <strong>The answer failed</strong>
      <p>{message}</p>
      {next && <p className="muted">{next}</p>}
    </div>
  );
}
