import { Trans, useLingui } from "@lingui/react/macro";
import type { TurnError } from "../../bindings";
import { PROVIDER_NEXT_STEP } from "../../lib/errors";

/** A failed answer: what happened, and what to do next. */
export function ErrorCard({ error, fallback }: { error: TurnError | null; fallback?: string | null }) {
  const { t } = useLingui();
  const message = error?.message ?? fallback;
  if (!message) return null;
  const hint = error ? PROVIDER_NEXT_STEP[error.kind] : undefined;
  // The table's entries are plain text today; as catalogue descriptors they are translated here.
  const next = hint === undefined || typeof hint === "string" ? hint : t(hint);
  return (
    <div className="error-card" role="alert">
      <strong>
        <Trans>The answer failed</Trans>
      </strong>
      <p>{message}</p>
      {next && <p className="muted">{next}</p>}
    </div>
  );
}
