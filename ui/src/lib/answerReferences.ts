// File references in a saved chat answer: checked by the engine against the user's folders
// (again whenever the folders change) and opened in the editor by it, like a review's.
import { useCallback, useMemo, useState } from "react";
import type { FileReference } from "../bindings";
import { call, commands, errorMessage } from "../ipc";
import { useSettings } from "./settings";
import { useLoad } from "./useLoad";

// Any of the three forms (see fileRefs.ts); only answers that have one ask the engine.
const MAY_HAVE_REFERENCES = /\[`[^`\s]+:\d+(?:-\d+)?`\]\[\]|\]\([^\s()]+:\d+(?:-\d+)?\)/;

export interface AnswerReferences {
  references?: Map<string, FileReference>;
  open?: (target: string) => void;
  /** Why the last reference did not open. */
  problem: string | null;
}

export function useAnswerReferences(messageId: number | null, content: string): AnswerReferences {
  const folders = useSettings().settings?.tools?.roots?.join("\n");
  const wanted = messageId !== null && MAY_HAVE_REFERENCES.test(content);
  const [openProblem, setOpenProblem] = useState<string | null>(null);
  // Checked again when the answer or the folders change; the newest check wins.
  const loaded = useLoad(
    () => call(commands.chatReferences(messageId!)),
    wanted && messageId !== null ? JSON.stringify([messageId, content, folders]) : null,
  );
  const references = useMemo(
    () => loaded.value && new Map<string, FileReference>(loaded.value.map((r) => [r.target, r])),
    [loaded.value],
  );
  const problem = openProblem ?? (loaded.error ? errorMessage(loaded.error) : null);

  const open = useCallback(
    (target: string) => {
      if (messageId === null) return;
      call(commands.chatOpenReference(messageId, target)).then(
        () => setOpenProblem(null),
        (e) => setOpenProblem(errorMessage(e)),
      );
    },
    [messageId, setOpenProblem],
  );
  return wanted ? { references, open, problem } : { problem: null };
}
