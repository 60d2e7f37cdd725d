import { useEffect } from "react";
import { Trans, useLingui } from "@lingui/react/macro";
import type { FoundPassage } from "../../bindings";
import { fileName } from "../../lib/filePicker";
import type { PassageSearch } from "../../lib/knowledgePicker";

export const PASSAGES_ID = "passage-picker";
export const passageId = (i: number) => `passage-hit-${i}`;

interface Props {
  search: PassageSearch;
  active: number;
  onPick: (passage: FoundPassage) => void;
  onActive: (index: number) => void;
}

// The text box keeps the focus: a press in the picker must not take it.
const keepFocus = (e: { preventDefault: () => void }) => e.preventDefault();

/** A passage's place with its file's name only ("auth.rs:12-30", "notes.pdf, page 2"): the
 * window is narrow; the whole path is its tooltip. */
export function shortPlace(p: FoundPassage): string {
  return p.place.startsWith(p.path) ? fileName(p.path) + p.place.slice(p.path.length) : p.place;
}

/** The first line of a passage with words in it, as a preview. */
function preview(text: string): string {
  return text.split("\n").find((l) => l.trim())?.trim() ?? "";
}

/** The `#` popup above the input: passages of the knowledge folders for the words typed after
 * the `#`. The text box keeps the focus (arrows, Enter and Esc are handled there). */
export function KnowledgePicker({ search, active, onPick, onActive }: Props) {
  const { t } = useLingui();
  const passages = search.passages ?? [];
  useEffect(() => {
    document.getElementById(passageId(active))?.scrollIntoView?.({ block: "nearest" });
  }, [active]);

  let status: string | null = null;
  if (search.error) status = search.error;
  else if (!search.done && passages.length === 0) status = t`Searching your folders…`;
  else if (search.done && passages.length === 0) status = t`No passage in your folders matches`;

  return (
    <div className="file-picker">
      {passages.length > 0 && (
        <div role="listbox" id={PASSAGES_ID} aria-label={t`Passages`}>
          {passages.map((p, i) => (
            <div
              key={p.place}
              id={passageId(i)}
              role="option"
              aria-selected={i === active}
              className={i === active ? "file-hit passage-hit active" : "file-hit passage-hit"}
              title={p.place}
              onMouseDown={keepFocus}
              onMouseEnter={() => onActive(i)}
              onClick={() => onPick(p)}
            >
              <span className="file-hit-name" dir="ltr">
                {shortPlace(p)}
              </span>
              <span className="file-hit-folder">{p.heading || preview(p.text)}</span>
            </div>
          ))}
        </div>
      )}
      {status && (
        <div className={search.error ? "file-picker-status warn" : "file-picker-status"} role="status">
          {status}
        </div>
      )}
      <div className="file-picker-keys">
        <Trans comment="the # picker's keys">↑↓ move · Enter or Tab attaches · Esc closes</Trans>
      </div>
    </div>
  );
}
