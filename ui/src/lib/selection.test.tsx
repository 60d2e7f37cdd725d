import { afterEach, describe, expect, it } from "vitest";
import { act, renderHook, waitFor } from "../test/render";
import { calls, emitEvent, onCommand } from "../test/tauri";
import { replaceSentSelection, resetSelection, restoreSelection, takeSelectionForSend, useSelection } from "./selection";

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

  it("replaces with the answer's text, one code fence around it taken off", async () => {
    onCommand("selection_take", () => ({ selection: NOTES, problem: null }));
    onCommand("selection_replace", () => null);
    const { result } = renderHook(() => useSelection());
    await waitFor(() => expect(result.current.pending).toEqual(NOTES));
    act(() => void takeSelectionForSend());
    await replaceSentSelection("```text\nThey're going.\n```\n");
    await replaceSentSelection("  They're going. ");
    const sent = calls.filter((c) => c.cmd === "selection_replace").map((c) => c.args);
    expect(sent).toEqual([
      { selection: NOTES, text: "They're going." },
      { selection: NOTES, text: "They're going." },
    ]);
  });
});
