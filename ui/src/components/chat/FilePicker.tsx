import { useEffect } from "react";
import { Trans, useLingui } from "@lingui/react/macro";
import type { Hit } from "../../bindings";
import { fileName, folderOf, type FileSearch } from "../../lib/filePicker";
import { formatNumber } from "../../lib/format";

export const PICKER_ID = "file-picker";
export const hitId = (i: number) => `file-hit-${i}`;

interface Props {
  search: FileSearch;
  active: number;
  onPick: (hit: Hit) => void;
  onActive: (index: number) => void;
  /** A folder chosen here, searched instead of the usual ones. */
  root: string | null;
  onChooseFolder: () => void;
  onUsualFolders: () => void;
}

// The text box keeps the focus: a press in the picker must not take it.
const keepFocus = (e: { preventDefault: () => void }) => e.preventDefault();

/** The `@` popup above the input: the best matches so far, and how the search is going. The
 * text box keeps the focus (arrows, Enter and Esc are handled there). */
export function FilePicker({ search, active, onPick, onActive, root, onChooseFolder, onUsualFolders }: Props) {
  const { t } = useLingui();
  const { hits, visited, done, capped, error } = search;
  useEffect(() => {
    document.getElementById(hitId(active))?.scrollIntoView?.({ block: "nearest" });
  }, [active]);

  const count = formatNumber(visited);
  let status: string | null = null;
  if (error) status = error;
  else if (!done) status = t`Searching ${count} files…`;
  else if (hits.length === 0) status = capped ? t`No files match in the first ${count}` : t`No files match`;
  else if (capped) status = t`Stopped after ${count} files: type more of the name to narrow it`;
  const folder = root ? fileName(root) || root : "";

  return (
    <div className="file-picker">
      {hits.length > 0 && (
        <div role="listbox" id={PICKER_ID} aria-label={t`Files`}>
          {hits.map((hit, i) => (
            <div
              key={hit.path}
              id={hitId(i)}
              role="option"
              aria-selected={i === active}
              className={i === active ? "file-hit active" : "file-hit"}
              title={hit.path}
              onMouseDown={keepFocus}
              onMouseEnter={() => onActive(i)}
              onClick={() => onPick(hit)}
            >
              <span className="file-hit-name">{fileName(hit.relative)}</span>
              <span className="file-hit-folder">{folderOf(hit.relative)}</span>
            </div>
          ))}
        </div>
      )}
      {status && (
        <div className={error ? "file-picker-status warn" : "file-picker-status"} role="status">
          {status}
        </div>
      )}
      <div className="file-picker-keys">
        {root ? (
          <>
            <span title={root}>
              <Trans comment="the folder the @ picker searches">In {folder}</Trans>
            </span> ·{" "}
            <button type="button" className="link" onMouseDown={keepFocus} onClick={onUsualFolders}>
              <Trans comment="link: search the usual folders again">Your folders</Trans>
            </button>
          </>
        ) : (
          <button type="button" className="link" onMouseDown={keepFocus} onClick={onChooseFolder}>
            <Trans comment="link: choose a folder to search">Another folder…</Trans>
          </button>
        )}{" "}
        <Trans comment="the @ picker's keys">· ↑↓ move · Enter or Tab attaches · Esc closes</Trans>
      </div>
    </div>
  );
}
