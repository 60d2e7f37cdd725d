import { beforeEach, describe, expect, it, vi } from "vitest";
import { act, render, screen, waitFor, within } from "../../test/render";
import userEvent from "@testing-library/user-event";
import { Composer } from "./Composer";
import { SettingsProvider } from "../../lib/settings";
import { atQuery, removeQuery } from "../../lib/filePicker";
import { calls, dragDrop, onCommand } from "../../test/tauri";
import type { SearchUpdate } from "../../bindings";
import { healthyApp } from "../../test/fixtures";
import { ROOT, filesBackend } from "../../test/files";

interface Options {
  streaming?: boolean;
  onStop?: () => void;
  onSend?: (...args: unknown[]) => Promise<boolean>;
  gate?: () => Promise<void>;
  used?: number;
}

function renderComposer({ streaming = false, onStop = () => {}, onSend = vi.fn(async () => true), gate, used = 0 }: Options = {}) {
  healthyApp();
  filesBackend(gate);
  render(
    <SettingsProvider>
      <Composer
        chat="new"
        streaming={streaming}
        models={[]}
        model="ollama:llama3"
        onModel={() => {}}
        usage={{ used, limit: 8192 }}
        editing={null}
        onSend={onSend}
        onStop={onStop}
        onEditLast={() => {}}
        onCancelEdit={() => {}}
      />
    </SettingsProvider>,
  );
  return { box: screen.getByRole<HTMLTextAreaElement>("textbox", { name: "Message" }), onSend };
}

const options = () => within(screen.getByRole("listbox", { name: "Files" })).getAllByRole("option");
const searches = () => calls.filter((c) => c.cmd === "files_search").map((c) => c.args.query);
const attaches = () => calls.filter((c) => c.cmd === "files_attach").map((c) => c.args);

/** Types `@query` and waits for the finished list. */
async function pickerFor(box: HTMLElement, typed: string, expected: number) {
  await userEvent.type(box, typed);
  await waitFor(() => expect(options()).toHaveLength(expected));
}

describe("the @ file picker", () => {
  beforeEach(() => localStorage.clear());

  it("searches a folder chosen in the picker, and the usual folders again on request", async () => {
    const { box } = renderComposer();
    onCommand("files_choose_folder", () => "/srv/other");
    await pickerFor(box, "@main", 1);
    const roots = () => calls.filter((c) => c.cmd === "files_search").map((c) => c.args.root);
    expect(roots().at(-1)).toBeNull();

    await userEvent.click(screen.getByRole("button", { name: "Another folder…" }));
    await waitFor(() => expect(roots().at(-1)).toBe("/srv/other"));
    expect(searches().at(-1)).toBe("main");
    expect(box).toHaveFocus();
    expect(screen.getByTitle("/srv/other")).toHaveTextContent("In other");

    await userEvent.click(screen.getByRole("button", { name: "Your folders" }));
    await waitFor(() => expect(roots().at(-1)).toBeNull());
    expect(screen.getByRole("button", { name: "Another folder…" })).toBeInTheDocument();
  });

  it("keeps the usual folders when the folder chooser is cancelled", async () => {
    const { box } = renderComposer();
    onCommand("files_choose_folder", () => null);
    await pickerFor(box, "@main", 1);
    const before = calls.filter((c) => c.cmd === "files_search").length;
    await userEvent.click(screen.getByRole("button", { name: "Another folder…" }));
    await waitFor(() => expect(calls.some((c) => c.cmd === "files_choose_folder")).toBe(true));
    expect(calls.filter((c) => c.cmd === "files_search").length).toBe(before);
    expect(screen.getByRole("button", { name: "Another folder…" })).toBeInTheDocument();
  });

  it("finds the @query at the cursor only at a word's start", () => {
    expect(atQuery("see @src/ma", 11)).toEqual({ start: 4, query: "src/ma" });
    expect(atQuery("@", 1)).toEqual({ start: 0, query: "" });
    expect(atQuery("mail me@example.com", 19)).toBeNull();
    expect(atQuery("see @main now", 13)).toBeNull();
    expect(removeQuery("see @main now", 4, 9)).toEqual({ value: "see now", caret: 4 });
  });

  it("opens on @, streams results while searching, filters as you type, and picks with the arrows and Enter", async () => {
    let release!: () => void;
    let held = true;
    const gate = () => (held ? new Promise<void>((r) => (release = r)) : Promise.resolve());
    const { box, onSend } = renderComposer({ gate, used: 1000 });
    await userEvent.type(box, "Explain @");
    // The first update: one hit, still walking.
    await waitFor(() => expect(options()).toHaveLength(1));
    expect(screen.getByRole("status")).toHaveTextContent("Searching 120 files…");
    held = false;
    await act(async () => release());
    await waitFor(() => expect(options()).toHaveLength(5));
    expect(screen.queryByText(/Searching/)).toBeNull();

    await userEvent.type(box, "rs");
    await waitFor(() => expect(options().map((o) => o.textContent)).toEqual(["main.rssrc", "lib.rssrc"]));
    expect(searches()).toEqual(["", "r", "rs"]);
    expect(options()[0]).toHaveAttribute("aria-selected", "true");
    await userEvent.keyboard("{ArrowDown}");
    expect(options()[1]).toHaveAttribute("aria-selected", "true");
    await userEvent.keyboard("{ArrowDown}");
    expect(options()[0]).toHaveAttribute("aria-selected", "true");
    await userEvent.keyboard("{ArrowUp}");
    expect(options()[1]).toHaveAttribute("aria-selected", "true");
    await userEvent.keyboard("{Enter}");

    expect(attaches()).toEqual([{ path: `${ROOT}/src/lib.rs`, firstLines: null }]);
    const chip = (await screen.findByText("lib.rs")).closest(".file-chip")!;
    expect(chip).toHaveTextContent("1.2K tokens");
    expect(chip).toHaveAttribute("title", `${ROOT}/src/lib.rs`);
    expect(box.value).toBe("Explain ");
    expect(screen.queryByRole("listbox")).toBeNull();
    expect(onSend).not.toHaveBeenCalled();
    // The gauge counts the file for the next question.
    expect(screen.getByLabelText("Context used")).toHaveTextContent("2.2K / 8K");
    // Said in words to a screen reader, not only drawn.
    expect(screen.getByRole("meter", { name: "Context used" })).toHaveAttribute("aria-valuetext", "2.2K of 8K tokens");
  });

  it("says when nothing matches, when the walk was capped, and why a search failed", async () => {
    const { box, onSend } = renderComposer();
    onCommand("files_search", (args) => {
      const query = String(args.query);
      if (query.startsWith("zz")) return { hits: [], visited: 200000, done: true, capped: query === "zzc" } satisfies SearchUpdate;
      if (query === "many") return { hits: [{ path: `${ROOT}/many.txt`, relative: "many.txt", score: 1 }], visited: 200000, done: true, capped: true };
      throw { kind: "not_found", message: "The folder /gone does not exist." };
    });
    await userEvent.type(box, "@zz");
    expect(await screen.findByRole("status")).toHaveTextContent(/^No files match$/);
    await userEvent.type(box, "c");
    expect(await screen.findByRole("status")).toHaveTextContent("No files match in the first 200,000");
    await userEvent.type(box, " @many");
    expect(await screen.findByRole("status")).toHaveTextContent("Stopped after 200,000 files: type more of the name to narrow it");
    expect(options()).toHaveLength(1);
    await userEvent.type(box, " @x");
    expect(await screen.findByRole("status")).toHaveTextContent("The folder /gone does not exist.");
    // Enter with nothing found (and the search over) sends as usual.
    await userEvent.keyboard("{Enter}");
    expect(onSend).toHaveBeenCalledWith("@zzc @many @x", [], [], [], undefined);
  });

  it("never lets an older query's late results replace the newer query's", async () => {
    const { box } = renderComposer();
    let releaseFirst!: () => void;
    onCommand("files_search", async (args) => {
      const channel = args.onUpdate as { onmessage: (u: SearchUpdate) => void };
      if (args.query === "") {
        await new Promise<void>((r) => (releaseFirst = r));
        const all = { hits: [{ path: `${ROOT}/old.txt`, relative: "old.txt", score: 1 }], visited: 5, done: true, capped: false };
        channel.onmessage(all);
        return all;
      }
      const hit = { hits: [{ path: `${ROOT}/new.txt`, relative: "new.txt", score: 1 }], visited: 5, done: true, capped: false };
      channel.onmessage(hit);
      return hit;
    });
    await userEvent.type(box, "@");
    await userEvent.type(box, "n");
    await waitFor(() => expect(options().map((o) => o.textContent)).toEqual(["new.txt"]));
    await act(async () => releaseFirst());
    expect(options().map((o) => o.textContent)).toEqual(["new.txt"]);
  });

  it("Esc closes the picker without stopping the answer or clearing the input", async () => {
    const onStop = vi.fn();
    const { box } = renderComposer({ streaming: true, onStop });
    let pageSawEsc = false;
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && !e.defaultPrevented && (pageSawEsc = true);
    window.addEventListener("keydown", onKey);
    await pickerFor(box, "Compare @rea", 1);
    await userEvent.keyboard("{Escape}");
    window.removeEventListener("keydown", onKey);
    expect(screen.queryByRole("listbox")).toBeNull();
    expect(box.value).toBe("Compare @rea");
    expect(onStop).not.toHaveBeenCalled();
    expect(pageSawEsc).toBe(false);
    expect(calls.some((c) => c.cmd === "files_cancel")).toBe(true);
    // Closed for this @: typing on does not bring it back; a new @ does.
    await userEvent.type(box, "d");
    expect(screen.queryByRole("listbox")).toBeNull();
    await userEvent.type(box, " and @ma");
    await waitFor(() => expect(options().length).toBeGreaterThan(0));
    // Leaving the box hides it; coming back shows it again.
    await userEvent.click(screen.getByRole("combobox", { name: "Model" }));
    expect(screen.queryByRole("listbox")).toBeNull();
    await userEvent.click(box);
    await waitFor(() => expect(options().length).toBeGreaterThan(0));
  });

  it("picks with a click and with Tab, removes a chip, and ignores a file picked twice", async () => {
    const { box } = renderComposer();
    await pickerFor(box, "@readme", 1);
    await userEvent.click(options()[0]);
    expect(await screen.findByText("README.md")).toBeInTheDocument();
    expect(box.value).toBe("");
    await pickerFor(box, "@readme", 1);
    await userEvent.keyboard("{Tab}");
    await pickerFor(box, "@main", 1);
    await userEvent.keyboard("{Enter}");
    await screen.findByText("main.rs");
    await waitFor(() => expect(attaches()).toHaveLength(3));
    expect(screen.getAllByText("README.md")).toHaveLength(1);
    expect(screen.getByLabelText("Context used")).toHaveTextContent("2.4K");
    // The remove button is a button: reachable with Tab, pressed with Enter.
    const remove = screen.getByRole("button", { name: "Remove README.md" });
    remove.focus();
    await userEvent.keyboard("{Enter}");
    expect(screen.queryByText("README.md")).toBeNull();
    expect(screen.getByText("main.rs")).toBeInTheDocument();
  });

  it("keeps the page while chips wait to be sent (a reload while hidden would lose them)", async () => {
    const holds = () => calls.filter((c) => c.cmd === "page_holds_unsent").map((c) => c.args.holds);
    const { box } = renderComposer();
    await userEvent.type(box, "only a draft");
    expect(holds()).toEqual([]);
    await pickerFor(box, " @readme", 1);
    await userEvent.keyboard("{Enter}");
    await screen.findByText("README.md");
    await waitFor(() => expect(holds()).toEqual([true]));
    await userEvent.click(screen.getByRole("button", { name: "Remove README.md" }));
    await waitFor(() => expect(holds()).toEqual([true, false]));
  });

  it("picks in the middle of the text, and leaves the cursor where the @ was", async () => {
    const { box } = renderComposer();
    await userEvent.type(box, "Read  now");
    await userEvent.type(box, "@main", { initialSelectionStart: 5, initialSelectionEnd: 5 });
    expect(box.value).toBe("Read @main now");
    await waitFor(() => expect(options()).toHaveLength(1));
    await userEvent.keyboard("{Enter}");
    await screen.findByText("main.rs");
    expect(box.value).toBe("Read now");
    await userEvent.keyboard("it ");
    expect(box.value).toBe("Read it now");
  });

  it("offers the first lines of a file too large, and attaches them", async () => {
    const { box } = renderComposer();
    await pickerFor(box, "@big", 1);
    await userEvent.keyboard("{Enter}");
    const notice = await screen.findByRole("alert");
    expect(notice).toHaveTextContent("big.log is 3.1 MB; a file may add at most 256 KB.");
    expect(screen.queryByText("big.log")).toBeNull();
    await userEvent.click(within(notice).getByRole("button", { name: "Attach the first 2,000 lines" }));
    expect(attaches().at(-1)).toEqual({ path: `${ROOT}/logs/big.log`, firstLines: 2000 });
    const chip = (await screen.findByText("big.log")).closest(".file-chip")!;
    expect(chip).toHaveTextContent("first 2,000 lines · 9K tokens");
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("sends the files with the question, clears them after, and keeps them when the send fails", async () => {
    let ok = false;
    const onSend = vi.fn(async () => ok);
    const { box } = renderComposer({ onSend });
    await pickerFor(box, "@main", 1);
    await userEvent.keyboard("{Enter}");
    await screen.findByText("main.rs");
    await pickerFor(box, "@shot", 1);
    await userEvent.keyboard("{Enter}");
    // An image goes the image way: an image chip, sent with the images.
    expect(await screen.findByRole("button", { name: "Remove shot.png" })).toBeInTheDocument();
    await userEvent.type(box, "What is in these?{Enter}");
    const image = { name: "shot.png", mime: "image/png", base64: "iVBORw0K", capture: null };
    const files = [{ path: `${ROOT}/src/main.rs`, first_lines: null }];
    expect(onSend).toHaveBeenLastCalledWith("What is in these?", [image], files, [], undefined);
    await waitFor(() => expect(box.value).toBe("What is in these?"));
    expect(screen.getByText("main.rs")).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Remove shot.png" })).toBeInTheDocument();

    ok = true;
    await userEvent.type(box, "{Enter}");
    expect(onSend).toHaveBeenLastCalledWith("What is in these?", [image], files, [], undefined);
    await waitFor(() => expect(box.value).toBe(""));
    expect(screen.queryByText("main.rs")).toBeNull();
    expect(screen.queryByRole("button", { name: "Remove shot.png" })).toBeNull();
  });

  it("attaches files dropped on the window", async () => {
    renderComposer();
    await act(async () => {}); // the window's drop listener is added
    act(() => dragDrop({ type: "enter", paths: [`${ROOT}/README.md`] }));
    expect(screen.getByText("Drop to attach")).toBeInTheDocument();
    act(() => dragDrop({ type: "drop", paths: [`${ROOT}/README.md`, `${ROOT}/src/main.rs`] }));
    expect(await screen.findByText("README.md")).toBeInTheDocument();
    expect(await screen.findByText("main.rs")).toBeInTheDocument();
    expect(screen.queryByText("Drop to attach")).toBeNull();
  });
});
