import type { AttachedFiles } from "../../lib/attachedFiles";
import { ComposerNote } from "./ComposerNote";
import { formatTokens } from "../../lib/models";

/** The attached files as chips: name (the full path on hover), what they add to the context, ×. */
export function FileChips({ attached }: { attached: AttachedFiles }) {
  return (
    <>
      {attached.files.map((f) => (
        <span key={f.path} className="chip file-chip" title={f.path} data-path={f.path}>
          <span className="file-chip-name">{f.name}</span>
          <span className="file-chip-tokens">
            {f.first_lines !== null && `first ${f.first_lines.toLocaleString()} lines · `}
            {formatTokens(f.tokens)} tokens
          </span>
          <button type="button" aria-label={`Remove ${f.name}`} title="Remove" onClick={() => attached.remove(f.path)}>
            ×
          </button>
        </span>
      ))}
    </>
  );
}

/** Files that could not become chips as they are: too large (with the offer of their first
 * lines), or refused (binary, missing, unreadable). */
export function FileNotices({ attached }: { attached: AttachedFiles }) {
  return (
    <>
      {attached.tooLarge.map((t) => (
        <ComposerNote key={t.path} warn className="file-notice" title={t.path} onDismiss={() => attached.dismiss(t.path)}>
          {t.message}{" "}
          {t.lines_that_fit > 0 && (
            <>
              <button type="button" className="link" onClick={() => void attached.attach(t.path, t.lines_that_fit)}>
                Attach the first {t.lines_that_fit.toLocaleString()} lines
              </button>
              {" ·"}
            </>
          )}
        </ComposerNote>
      ))}
      {attached.problem && (
        <ComposerNote warn className="file-notice" onDismiss={attached.dismissProblem}>
          {attached.problem}
        </ComposerNote>
      )}
    </>
  );
}
