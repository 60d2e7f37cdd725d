import type { TurnError } from "../../bindings";
import { PROVIDER_NEXT_STEP } from "../../lib/errors";

/** A failed answer: what happened, and what to do next. */
export function ErrorCard({ error, fallback }: { error: TurnError | null; fallback?: string | null }) {
  const message = error?.message ?? fallback;
  if (!message) return null;
  const next = error ? PROVIDER_NEXT_STEP[error.kind] : undefined;
  return (
    <div className="error-card" role="alert">
      <strong>The answer failed</strong>
      <p>{message}</p>
      {next && <p className="muted">{next}</p>}
    </div>
  );
}
