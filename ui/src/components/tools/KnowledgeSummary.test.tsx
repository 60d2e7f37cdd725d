import { describe, expect, it } from "vitest";
import { render, screen } from "../../test/render";
import userEvent from "@testing-library/user-event";
import { QuestionsProvider } from "../../lib/questions";
import { toolCall } from "../../test/fixtures";
import { calls, onCommand } from "../../test/tauri";
import { ToolCallCard } from "./ToolCallCard";

const CITED = "/home/u/project/docs/decisions.md:6-8";
const CALL = toolCall({
  message_id: 12,
  server: "knowledge",
  tool: "search_knowledge",
  arguments: { query: "retry policy" },
  output: {
    text: "[`/home/u/project/docs/decisions.md:6-8`][] (Decisions > Retry policy)\n```\n…\n```",
    images: [],
    is_error: false,
    truncated_chars: 0,
    structured: {
      passages: [
        { path: "/home/u/project/docs/decisions.md", start: 6, end: 8, heading: "Decisions > Retry policy", citation: CITED, score: 0.03 },
        { path: "/home/u/project/docs/field-notes.pdf", start: 2, end: 2, heading: "page 2", citation: "/home/u/project/docs/field-notes.pdf:2", score: 0.02, pdf: true },
      ],
      retrieval: "hybrid",
    },
  },
});

describe("KnowledgeSummary", () => {
  it("lists the passages found, each opening the editor at its lines", async () => {
    onCommand("questions_pending", () => []);
    let fail = false;
    onCommand("chat_open_reference", () => {
      if (fail) throw { kind: "not_found", message: "decisions.md is not in your folders" };
      return null;
    });
    render(
      <QuestionsProvider>
        <ToolCallCard call={CALL} />
      </QuestionsProvider>,
    );
    expect(screen.getByLabelText("Knowledge search summary")).toHaveTextContent("Searched your folders for “retry policy” · 2 passages");
    // A PDF's passage names its page and opens nothing in the editor.
    expect(screen.getByText("field-notes.pdf")).toBeInTheDocument();
    expect(screen.getByText(/page 2/)).toBeInTheDocument();
    expect(screen.getAllByRole("button", { name: /in the editor/ })).toHaveLength(1);
    expect(screen.getByText(/Decisions > Retry policy/)).toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { name: "Open decisions.md:6-8 in the editor" }));
    expect(calls.find((c) => c.cmd === "chat_open_reference")?.args).toEqual({ messageId: 12, target: CITED });
    fail = true;
    await userEvent.click(screen.getByRole("button", { name: "Open decisions.md:6-8 in the editor" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("decisions.md is not in your folders");
  });
});
