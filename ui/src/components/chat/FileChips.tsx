import { Trans, useLingui } from "@lingui/react/macro";
import type { AttachedFiles } from "../../lib/attachedFiles";
import { ComposerNote } from "./ComposerNote";
import { formatNumber, formatTokens } from "../../lib/format";

/** The attached files as chips: name (the full path on hover), what they add to the context, ×. */
export function FileChips({ attached }: { attached: AttachedFiles }) {
  const { t } = useLingui();
  return (
    <>
      {attached.files.map((f) => {
        const tokens = formatTokens(f.tokens);
        const name = f.name;
        const lines = f.first_lines !== null ? formatNumber(f.first_lines) : null;
        return (
          <span key={f.path} className="chip file-chip" title={f.path} data-path={f.path}>
            <span className="file-chip-name">{name}</span>
            <span className="file-chip-tokens">
              {lines !== null
                ? t({ message: `first ${lines} lines · ${tokens} tokens`, comment: "an attached file: only its first lines, and what it adds to the context" })
                : t({ message: `${tokens} tokens`, comment: "an attached file: what it adds to the context" })}
            </span>
            <button type="button" aria-label={t`Remove ${name}`} title={t`Remove`} onClick={() => attached.remove(f.path)}>
              ×
            </button>
          </span>
        );
      })}
    </>
  );
}

/** Files that could not become chips as they are: too large (with the offer of their first
 * lines), or refused (binary, missing, unreadable). */
export function FileNotices({ attached }: { attached: AttachedFiles }) {
  return (
    <>
      {attached.tooLarge.map((big) => {
        const lines = formatNumber(big.lines_that_fit);
        return (
          <ComposerNote key={big.path} warn className="file-notice" title={big.path} onDismiss={() => attached.dismiss(big.path)}>
            {big.message}{" "}
            {big.lines_that_fit > 0 && (
              <>
                <button type="button" className="link" onClick={() => void attached.attach(big.path, big.lines_that_fit)}>
                  <Trans>Attach the first {lines} lines</Trans>
                </button>
                {" ·"}
              </>
            )}
          </ComposerNote>
        );
      })}
      {attached.problem && (
        <ComposerNote warn className="file-notice" onDismiss={attached.dismissProblem}>
          {attached.problem}
        </ComposerNote>
      )}
    </>
  );
}
