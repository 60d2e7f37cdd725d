// File references in a saved chat answer: checked by the engine against the user's folders
// (again whenever the folders change) and opened in the editor by it, like a review's.
import { useCallback, useEffect, useState } from "react";
import type { FileReference } from "../bindings";
import { call, commands, errorMessage } from "../ipc";
import { useSettings } from "./settings";

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
  const [references, setReferences] = useState<Map<string, FileReference>>();
  const [problem, setProblem] = useState<string | null>(null);

  useEffect(() => {
    if (!wanted || messageId === null) return;
    let live = true;
    call(commands.chatReferences(messageId)).then(
      (found) => live && setReferences(new Map(found.map((r) => [r.target, r]))),
      (e) => live && setProblem(errorMessage(e)),
    );
    return () => {
      live = false;
    };
  }, [wanted, messageId, content, folders]);

  const open = useCallback(
    (target: string) => {
      if (messageId === null) return;
      call(commands.chatOpenReference(messageId, target)).then(
        () => setProblem(null),
        (e) => setProblem(errorMessage(e)),
      );
    },
    [messageId],
  );
  return wanted ? { references, open, problem } : { problem: null };
}
