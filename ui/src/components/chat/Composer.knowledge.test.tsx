import { beforeEach, describe, expect, it, vi } from "vitest";
import { render, screen, waitFor, within } from "../../test/render";
import userEvent from "@testing-library/user-event";
import { Composer } from "./Composer";
import { SettingsProvider } from "../../lib/settings";
import { calls, onCommand } from "../../test/tauri";
import type { FoundPassage } from "../../bindings";
import { healthyApp } from "../../test/fixtures";

const RETRY: FoundPassage = {
  path: "/home/ada/notes/decisions.md",
  start: 6,
  end: 7,
  place: "/home/ada/notes/decisions.md:6-7",
  heading: "Decisions > Retry policy",
  text: "## Retry policy\nFailed uploads are attempted again three times.",
};
const PAGE: FoundPassage = {
  path: "/home/ada/papers/raft.pdf",
  start: 2,
  end: 2,
  place: "/home/ada/papers/raft.pdf, page 2",
  heading: "page 2",
  text: "Leaders send heartbeats.",
};

function renderComposer(onSend = vi.fn(async (..._args: unknown[]) => true)) {
  healthyApp();
  render(
    <SettingsProvider>
      <Composer
        chat="new"
        streaming={false}
        models={[]}
        model="ollama:llama3"
        onModel={() => {}}
        usage={{ used: 0, limit: 8192 }}
        editing={null}
        onSend={onSend}
        onStop={() => {}}
        onEditLast={() => {}}
        onCancelEdit={() => {}}
      />
    </SettingsProvider>,
  );
  return { box: screen.getByRole<HTMLTextAreaElement>("textbox", { name: "Message" }), onSend };
}

const picks = () => calls.filter((c) => c.cmd === "knowledge_pick").map((c) => c.args.query);
const options = () => within(screen.getByRole("listbox", { name: "Passages" })).getAllByRole("option");

describe("the # passage picker", () => {
  beforeEach(() => localStorage.clear());

  it("offers passages for the words after #, attaches the one picked as its lines, and sends them with the question", async () => {
    onCommand("knowledge_pick", () => [RETRY, PAGE]);
    const { box, onSend } = renderComposer();
    await userEvent.type(box, "Is this enough? #retry pol");
    await waitFor(() => expect(options()).toHaveLength(2));
    expect(picks().at(-1)).toBe("retry pol");
    expect(options()[0]).toHaveTextContent("decisions.md:6-7");
    expect(options()[1]).toHaveTextContent("raft.pdf, page 2");
    expect(box).toHaveAttribute("aria-activedescendant", "passage-hit-0");

    await userEvent.keyboard("{ArrowDown}{ArrowUp}{Enter}");
    expect(box.value).toBe("Is this enough? ");
    expect(screen.queryByRole("listbox", { name: "Passages" })).not.toBeInTheDocument();
    expect(screen.getByTitle(RETRY.place)).toHaveTextContent("decisions.md:6-7");

    // A second pick, of the PDF's page, with Tab.
    await userEvent.type(box, "#raft");
    await waitFor(() => expect(picks().at(-1)).toBe("raft"));
    await waitFor(() => expect(options()).toHaveLength(2));
    await userEvent.keyboard("{ArrowDown}{Tab}");
    expect(screen.getByTitle(PAGE.place)).toBeInTheDocument();

    await userEvent.keyboard("{Enter}");
    await waitFor(() => expect(onSend).toHaveBeenCalledTimes(1));
    const [text, , files] = onSend.mock.calls[0];
    expect(text).toBe("Is this enough? ");
    expect(files).toEqual([
      { path: RETRY.path, first_lines: null, lines: [6, 7] },
      { path: PAGE.path, first_lines: null, lines: [2, 2] },
    ]);
    expect(screen.queryByTitle(RETRY.place)).not.toBeInTheDocument();
  });

  it("stays closed while no folder is indexed, and Enter sends the text as typed", async () => {
    onCommand("knowledge_pick", () => null);
    const { box, onSend } = renderComposer();
    await userEvent.type(box, "tag it #urgent");
    await waitFor(() => expect(picks()).toContain("urgent"));
    expect(screen.queryByRole("listbox", { name: "Passages" })).not.toBeInTheDocument();
    await userEvent.keyboard("{Enter}");
    await waitFor(() => expect(onSend).toHaveBeenCalledTimes(1));
    expect(onSend.mock.calls[0][0]).toBe("tag it #urgent");
  });

  it("closes on Esc with the words kept, says when nothing matches, and keeps the chips when the send fails", async () => {
    onCommand("knowledge_pick", ({ query }) => (query === "zebra" ? [] : [RETRY]));
    const onSend = vi.fn(async (..._args: unknown[]) => false);
    const { box } = renderComposer(onSend);
    await userEvent.type(box, "#zebra");
    expect(await screen.findByText("No passage in your folders matches")).toBeInTheDocument();
    await userEvent.clear(box);
    await userEvent.type(box, "#retry");
    await waitFor(() => expect(options()).toHaveLength(1));
    await userEvent.keyboard("{Escape}");
    expect(screen.queryByRole("listbox", { name: "Passages" })).not.toBeInTheDocument();
    expect(box.value).toBe("#retry");

    await userEvent.clear(box);
    await userEvent.type(box, "why #retry");
    await waitFor(() => expect(options()).toHaveLength(1));
    await userEvent.keyboard("{Enter}");
    await userEvent.type(box, "three?");
    await userEvent.keyboard("{Enter}");
    await waitFor(() => expect(onSend).toHaveBeenCalledTimes(1));
    // Nothing picked is lost: the chip and the text are back.
    await waitFor(() => expect(screen.getByTitle(RETRY.place)).toBeInTheDocument());
    expect(box.value).toBe("why three?");
  });
});
