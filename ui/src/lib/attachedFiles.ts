// Files attached to the next question (picked with `@` or dropped on the window): each checked by
// the engine first. Text files become chips; images go the composer's image way; a file too
// large waits as an offer to attach its first lines.
import { useCallback, useEffect, useRef, useState } from "react";
import { t } from "@lingui/core/macro";
import type { Attachable, FileInput, ImageInput } from "../bindings";
import { call, commands, errorMessage } from "../ipc";
import { fileName } from "./filePicker";

/** A text file as the engine checked it (`files_attach`). */
export type FileChip = Omit<Extract<Attachable, { kind: "text" }>, "kind">;
/** A file over the size limit, with the number of first lines that would fit. */
export type TooLarge = Omit<Extract<Attachable, { kind: "too_large" }>, "kind">;

export interface AttachedFiles {
  files: FileChip[];
  tooLarge: TooLarge[];
  /** Why the last file could not be attached. */
  problem: string | null;
  tokens: number;
  attach: (path: string, firstLines?: number | null) => Promise<void>;
  remove: (path: string) => void;
  dismiss: (path: string) => void;
  dismissProblem: () => void;
  /** Takes the chips off for sending; `restore` puts them back when the send fails. */
  take: () => FileChip[];
  restore: (files: FileChip[]) => void;
  /** Another chat's chips in place of these (the composer shows that chat now). */
  replace: (files: FileChip[]) => void;
}

export function useAttachedFiles(onImage: (image: ImageInput) => void): AttachedFiles {
  const [files, setFiles] = useState<FileChip[]>([]);
  const [tooLarge, setTooLarge] = useState<TooLarge[]>([]);
  const [problem, setProblem] = useState<string | null>(null);
  // The chips as last shown: a send reads them after awaiting (an auto-screenshot).
  const shown = useRef(files);
  useEffect(() => {
    shown.current = files;
  }, [files]);

  const attach = useCallback(
    async (path: string, firstLines: number | null = null) => {
      try {
        const got = await call(commands.filesAttach(path, firstLines));
        setProblem(null);
        if (got.kind === "too_large") {
          const { kind: _, ...offer } = got;
          setTooLarge((list) => [...list.filter((t) => t.path !== offer.path), offer]);
          return;
        }
        setTooLarge((list) => list.filter((t) => t.path !== path));
        if (got.kind === "image") {
          onImage(got.image);
          return;
        }
        const { kind: _, ...chip } = got;
        // Picked twice: one chip.
        setFiles((list) => (list.some((f) => f.path === chip.path) ? list : [...list, chip]));
      } catch (e) {
        const what = fileName(path);
        const why = errorMessage(e);
        setProblem(
          t({
            message: `${what}: ${why}`,
            comment: "a thing, then what is wrong with it (a file, a reference or a failed action, and the reason)",
          }),
        );
      }
    },
    [onImage],
  );

  const remove = useCallback((path: string) => setFiles((list) => list.filter((f) => f.path !== path)), []);
  const dismiss = useCallback((path: string) => setTooLarge((list) => list.filter((t) => t.path !== path)), []);
  const dismissProblem = useCallback(() => setProblem(null), []);
  const take = () => {
    const taken = shown.current;
    setFiles((list) => list.filter((f) => !taken.includes(f)));
    setProblem(null);
    return taken;
  };
  // Chips picked while the send was under way stay, after the ones put back.
  const restore = (back: FileChip[]) =>
    setFiles((list) => [...back, ...list.filter((f) => !back.some((b) => b.path === f.path))]);
  const replace = (list: FileChip[]) => {
    setFiles(list);
    setTooLarge([]);
    setProblem(null);
  };
  return {
    files,
    tooLarge,
    problem,
    tokens: files.reduce((sum, f) => sum + f.tokens, 0),
    attach,
    remove,
    dismiss,
    dismissProblem,
    take,
    restore,
    replace,
  };
}

/** What a question sends for its chips. */
export function fileInputs(files: FileChip[]): FileInput[] {
  return files.map((f) => ({ path: f.path, first_lines: f.first_lines }));
}
