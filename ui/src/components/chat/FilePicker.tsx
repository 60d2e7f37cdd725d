import { useEffect } from "react";
import type { Hit } from "../../bindings";
import { fileName, folderOf, type FileSearch } from "../../lib/filePicker";

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
  const { hits, visited, done, capped, error } = search;
  useEffect(() => {
    document.getElementById(hitId(active))?.scrollIntoView?.({ block: "nearest" });
  }, [active]);

  let status: string | null = null;
  if (error) status = error;
  else if (!done) status = `Searching ${visited.toLocaleString()} files…`;
  else if (hits.length === 0) status = capped ? `No files match in the first ${visited.toLocaleString()}` : "No files match";
  else if (capped) status = `Stopped after ${visited.toLocaleString()} files: type more of the name to narrow it`;

  return (
    <div className="file-picker">
      {hits.length > 0 && (
        <div role="listbox" id={PICKER_ID} aria-label="Files">
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
            <span title={root}>In {fileName(root) || root}</span> ·{" "}
            <button type="button" className="link" onMouseDown={keepFocus} onClick={onUsualFolders}>
              Your folders
            </button>
          </>
        ) : (
          <button type="button" className="link" onMouseDown={keepFocus} onClick={onChooseFolder}>
            Another folder…
          </button>
        )}{" "}
        · ↑↓ move · Enter or Tab attaches · Esc closes
      </div>
    </div>
  );
}
