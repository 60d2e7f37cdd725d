import { describe, expect, it } from "vitest";
import { cleanup, render, screen, within } from "../../test/render";
import type { ToolCallRecord } from "../../bindings";
import { QuestionsProvider } from "../../lib/questions";
import { onCommand } from "../../test/tauri";
import { ToolCallCard } from "./ToolCallCard";

// The structured results perch-mcp-google answers with (mcp_servers/google/src/gmail.rs and
// calendar.rs).
function googleCall(tool: string, args: Record<string, unknown>, structured: unknown = undefined): ToolCallRecord {
  const done = structured !== undefined;
  return {
    id: "g1",
    call_id: "p1",
    message_id: 2,
    round: 0,
    text_offset: 0,
    server: "google",
    tool,
    arguments: args,
    status: done ? "done" : "pending",
    output: done ? { text: "the model's text", is_error: false, images: [], truncated_chars: 0, structured } : null,
    duration_ms: done ? 40 : null,
    created_at: 0,
  } as ToolCallRecord;
}

function show(call: ToolCallRecord) {
  onCommand("questions_pending", () => []);
  render(
    <QuestionsProvider>
      <ToolCallCard call={call} />
    </QuestionsProvider>,
  );
}

describe("Google tool summaries", () => {
  it("shows a message to be sent as a letter, not JSON", async () => {
    show(
      googleCall("gmail_send", {
        to: ["Grace Hopper <grace@example.com>"],
        cc: [],
        subject: "Débrief",
        body: "Hello Grace,\n\nThe notes are attached.",
      }),
    );
    const card = await screen.findByRole("region", { name: "Tool google:gmail_send" });
    expect(within(card).getByText("Send")).toBeInTheDocument();
    expect(within(card).getByText("Grace Hopper <grace@example.com>")).toBeInTheDocument();
    expect(within(card).getByText("Débrief")).toBeInTheDocument();
    expect(within(card).getByText(/The notes are attached/)).toBeInTheDocument();
    expect(within(card).queryByText(/"to":/)).not.toBeInTheDocument();
  });

  it("says where a reply goes before it is allowed, and who it went to after", async () => {
    show(googleCall("gmail_reply", { message_id: "m1", body: "Thanks!", reply_all: true }));
    const card = await screen.findByRole("region", { name: "Tool google:gmail_reply" });
    expect(within(card).getByText(/to its sender/)).toHaveTextContent("copying everyone else it went to");
    expect(within(card).getByText("Reply to all")).toBeInTheDocument();
  });

  it("shows who a sent reply went to", async () => {
    show(
      googleCall(
        "gmail_reply",
        { message_id: "m1", body: "Thanks!" },
        { id: "s1", threadId: "t1", subject: "Re: Trip", to: ["Ana Lima <ana@example.org>"], cc: [], bcc: [] },
      ),
    );
    expect(await screen.findByLabelText("Recipients")).toHaveTextContent("Sent to Ana Lima <ana@example.org>");
  });

  it("lists the messages a search found with sender, subject and date", async () => {
    show(
      googleCall(
        "gmail_search",
        { query: "is:unread" },
        {
          query: "is:unread",
          messages: [
            { id: "a1", from: "Grace Hopper", subject: "Compiler notes", date: "Tue 24 Nov 09:12", unread: true },
            { id: "a2", from: "Ada", subject: "", date: "Mon 23 Nov 18:00", unread: false },
          ],
        },
      ),
    );
    const messages = await screen.findByRole("list", { name: "Messages" });
    const rows = within(messages).getAllByRole("listitem");
    expect(rows[0]).toHaveTextContent("Grace Hopper — Compiler notes Tue 24 Nov 09:12 · unread");
    expect(rows[1]).toHaveTextContent("Ada — (no subject)");
    expect(screen.getByText(/Search mail for/)).toHaveTextContent("is:unread");
  });

  it("shows an event to be created, then the event with its time and guests", async () => {
    const args = { title: "Design review", start: "2026-12-01T10:00", duration_minutes: 45, attendees: ["ana@example.com"] };
    show(googleCall("calendar_create_event", args));
    const card = await screen.findByRole("region", { name: "Tool google:calendar_create_event" });
    expect(within(card).getByText("New event")).toBeInTheDocument();
    expect(within(card).getByText("2026-12-01T10:00 (45 min)")).toBeInTheDocument();
    expect(within(card).getByText("ana@example.com")).toBeInTheDocument();
    expect(within(card).getByText("The guests get an email about it.")).toBeInTheDocument();
  });

  it("shows a change's new guests and that they are told, and an event no one hears of", async () => {
    const change = { event_id: "e7", start: "2026-12-01T11:00", attendees: ["x@evil.example"] };
    show(googleCall("calendar_update_event", change));
    const card = await screen.findByRole("region", { name: "Tool google:calendar_update_event" });
    expect(within(card).getByText("Change event e7")).toBeInTheDocument();
    expect(within(card).getByText("x@evil.example")).toBeInTheDocument();
    expect(within(card).getByText("The guests get an email about it.")).toBeInTheDocument();
    cleanup();
    show(googleCall("calendar_create_event", { title: "Focus time", start: "2026-12-01T09:00" }));
    const alone = await screen.findByRole("region", { name: "Tool google:calendar_create_event" });
    expect(within(alone).queryByText("The guests get an email about it.")).toBeNull();
  });

  it("shows a created event from its result", async () => {
    show(
      googleCall(
        "calendar_create_event",
        { title: "Design review" },
        {
          id: "e1",
          title: "Design review",
          when: "Tue 1 Dec 10:00–10:45",
          location: "Room 4",
          attendees: [{ email: "ana@example.com", name: "Ana", response: "needsAction" }],
        },
      ),
    );
    const event = await screen.findByRole("list", { name: "Event" });
    expect(event).toHaveTextContent("Design review Tue 1 Dec 10:00–10:45 · Room 4 · with Ana");
  });
});
