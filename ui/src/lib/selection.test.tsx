import { afterEach, describe, expect, it } from "vitest";
import { act, renderHook, waitFor } from "../test/render";
import { calls, emitEvent, onCommand } from "../test/tauri";
import { previewReplacement, replaceSentSelection, resetSelection, restoreSelection, takeSelectionForSend, useSelection } from "./selection";

const NOTES = { text: "their going", app: "Notes", window: 42 };

describe("the selection store", () => {
  afterEach(resetSelection);

  it("takes what the shortcut brought when told, moves it to sent with the question, and gives it back on a failed send", async () => {
    let waiting: unknown = { selection: NOTES, problem: null };
    onCommand("selection_take", () => {
      const taken = waiting;
      waiting = null;
      return taken;
    });
    const { result } = renderHook(() => useSelection());
    await waitFor(() => expect(result.current.pending).toEqual(NOTES));
    act(() => void takeSelectionForSend());
    expect(result.current.pending).toBeNull();
    expect(result.current.sent).toEqual(NOTES);
    act(() => restoreSelection(NOTES));
    expect(result.current.pending).toEqual(NOTES);

    // A later press with nothing selected says why and keeps what was waiting.
    waiting = { selection: null, problem: "No text is selected in the focused application" };
    await act(async () => emitEvent("selection-taken", {}));
    await waitFor(() => expect(result.current.problem).toMatch(/No text is selected/));
    expect(result.current.pending).toEqual(NOTES);
  });

  it("asks the engine what would replace the sent selection, then replaces it with the same answer", async () => {
    onCommand("selection_take", () => ({ selection: NOTES, problem: null }));
    onCommand("selection_replacement", () => ({ text: "They're going.", delivery: "keys", refused: null }));
    onCommand("selection_replace", () => ({ kind: "typed" }));
    const { result } = renderHook(() => useSelection());
    await waitFor(() => expect(result.current.pending).toEqual(NOTES));
    act(() => void takeSelectionForSend());
    const answer = "```text\nThey're going.\n```\n";
    expect(await previewReplacement(answer)).toEqual({ text: "They're going.", delivery: "keys", refused: null });
    expect(await replaceSentSelection(answer)).toEqual({ kind: "typed" });
    // The answer goes as it is: the engine alone makes the plain text, for the preview and the typing.
    const sent = calls.filter((c) => c.cmd.startsWith("selection_replace")).map((c) => [c.cmd, c.args]);
    expect(sent).toEqual([
      ["selection_replacement", { selection: NOTES, answer }],
      ["selection_replace", { selection: NOTES, answer }],
    ]);
  });
});
