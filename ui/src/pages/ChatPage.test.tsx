import { beforeEach, describe, expect, it, vi } from "vitest";
import { act, fireEvent, render, screen, within } from "../test/render";
import userEvent from "@testing-library/user-event";
import { MemoryRouter, Route, Routes, useNavigate } from "react-router";
import type { Capture, ConversationView, Message, TurnEvent } from "../bindings";
import { ChatPage } from "./ChatPage";
import { SettingsProvider } from "../lib/settings";
import { FailureNotices } from "../components/Notices";
import { calls, emitEvent, onCommand } from "../test/tauri";
import { SETTINGS, healthyApp } from "../test/fixtures";
import { ROOT, filesBackend } from "../test/files";

function message(id: number, role: "user" | "assistant", content: string, extra: Partial<Message> = {}): Message {
  return {
    id,
    conversation_id: "c1",
    role,
    content,
    thinking: null,
    model: role === "assistant" ? "ollama:qwen3-vl:8b-instruct" : null,
    status: "complete",
    error: null,
    input_tokens: role === "assistant" ? 120 : null,
    output_tokens: role === "assistant" ? 30 : null,
    created_at: Date.now(),
    alternative_of: null,
    ...extra,
  };
}

function view(messages: Message[], model = "ollama:qwen3-vl:8b-instruct"): ConversationView {
  return {
    model_key: `ollama:registry.ollama.ai/library/${model.slice("ollama:".length).toLowerCase()}`,
    conversation: {
      id: "c1",
      title: "Test",
      model,
      created_at: 0,
      updated_at: 0,
      input_tokens: 0,
      output_tokens: 0,
      message_count: messages.length,
    },
    messages: messages.map((m) => ({ message: m, versions: [], attachments: [], tool_calls: [], memories: [], cost: null })),
    cost: null,
  };
}

type Emit = (e: TurnEvent) => void;

/** A chat backend: `chat_send` plays `script` through the channel, then saves `saved`. */
function backend(script: (emit: Emit, args: Record<string, unknown>) => Promise<void> | void) {
  healthyApp();
  let saved = view([]);
  onCommand("models_list", () => ({
    providers: [
      {
        provider: "ollama",
        error: null,
        models: [
          { id: "ollama:qwen3-vl:8b-instruct", key: "ollama:registry.ollama.ai/library/qwen3-vl:8b-instruct", provider: "ollama", name: "qwen3-vl:8b-instruct", context_length: 32768, capabilities: { vision: true, tools: true, thinking: true } },
          { id: "ollama:llama3.2:3b", key: "ollama:registry.ollama.ai/library/llama3.2:3b", provider: "ollama", name: "llama3.2:3b", context_length: 8192, capabilities: { vision: false, tools: true, thinking: false } },
        ],
      },
    ],
    default_model: "ollama:qwen3-vl:8b-instruct",
  }));
  onCommand("conversation_view", () => saved);
  onCommand("chat_stop", () => true);
  onCommand("chat_send", async (args) => {
    const channel = args.onEvent as { onmessage: Emit };
    const emit: Emit = (e) => channel.onmessage(e);
    await script(emit, args);
    return saved.messages.at(-1)?.message;
  });
  return (next: Message[], model?: string) => (saved = view(next, model));
}

/** Buttons that go to a chat, as Ctrl+N and History do. */
function Go() {
  const navigate = useNavigate();
  return (
    <>
      {["/", "/chat/c1"].map((to) => (
        <button key={to} type="button" onClick={() => void navigate(to)}>
          to {to}
        </button>
      ))}
    </>
  );
}

function page(path = "/", withNavigation = false) {
  return render(
    <SettingsProvider>
      <MemoryRouter initialEntries={[path]}>
        {withNavigation && <Go />}
        <Routes>
          <Route path="/" element={<ChatPage />} />
          <Route path="/chat/:id" element={<ChatPage />} />
        </Routes>
      </MemoryRouter>
      <FailureNotices />
    </SettingsProvider>,
  );
}

const started = (assistantId: number): TurnEvent => ({
  event: "started",
  data: {
    run_id: "r",
    conversation: view([]).conversation,
    user_message: null,
    assistant_message: message(assistantId, "assistant", "", { status: "streaming" }),
    omitted: 0,
    context_length: 32768,
    memories: [],
  },
});

describe("ChatPage", () => {
  beforeEach(() => {
    localStorage.clear();
    sessionStorage.clear();
  });

  it("offers once, under a first answer that arrived whole, to start Perch at login", async () => {
    let release!: () => void;
    const save = backend(async (emit) => {
      save([message(1, "user", "Hi"), message(2, "assistant", "", { status: "streaming" })]);
      emit(started(2));
      emit({ event: "text", data: "Hello" });
      await new Promise<void>((r) => (release = r));
      save([message(1, "user", "Hi"), message(2, "assistant", "Hello there.")]);
      emit({ event: "finished", data: { message: message(2, "assistant", "Hello there."), error: null } });
    });
    healthyApp({}, { start_at_login_offered: false });
    page();
    await userEvent.type(screen.getByRole("textbox", { name: "Message" }), "Hi{Enter}");
    expect(await screen.findByText(/Hello/)).toBeInTheDocument();
    expect(screen.queryByRole("region", { name: "Start at login" })).not.toBeInTheDocument();
    await act(async () => release());
    const offer = await screen.findByRole("region", { name: "Start at login" });
    await userEvent.click(within(offer).getByRole("button", { name: "Not now" }));
    await vi.waitFor(() => expect(screen.queryByRole("region", { name: "Start at login" })).not.toBeInTheDocument());
    expect(calls.filter((c) => c.cmd === "start_at_login_offered")).toHaveLength(1);
    expect(calls.some((c) => c.cmd === "set_start_at_login")).toBe(false);
  });

  it("makes no such offer under an answer that was stopped", async () => {
    const save = backend(() => {});
    healthyApp({}, { start_at_login_offered: false });
    save([message(1, "user", "Hi"), message(2, "assistant", "Hel", { status: "stopped" })]);
    page("/chat/c1");
    expect(await screen.findByText("Hel")).toBeInTheDocument();
    await act(async () => new Promise((r) => setTimeout(r, 50)));
    expect(calls.some((c) => c.cmd === "start_at_login")).toBe(false);
    expect(screen.queryByRole("region", { name: "Start at login" })).not.toBeInTheDocument();
  });

  it("keeps the draft across a remount, so nothing typed is lost", async () => {
    backend(() => {});
    const first = page();
    await userEvent.type(screen.getByRole("textbox", { name: "Message" }), "half a thought");
    first.unmount();
    page();
    expect(screen.getByRole("textbox", { name: "Message" })).toHaveValue("half a thought");
  });

  it("streams thinking and text, then shows the saved answer", async () => {
    let release!: () => void;
    const save = backend(async (emit) => {
      save([message(1, "user", "Why is the sky blue?"), message(2, "assistant", "", { status: "streaming" })]);
      emit(started(2));
      emit({ event: "thinking", data: "Rayleigh scattering." });
      emit({ event: "text", data: "Because of **Rayleigh** " });
      await new Promise<void>((r) => (release = r));
      emit({ event: "text", data: "scattering." });
      save([message(1, "user", "Why is the sky blue?"), message(2, "assistant", "Because of **Rayleigh** scattering.", { thinking: "Rayleigh scattering." })]);
      emit({ event: "finished", data: { message: message(2, "assistant", "Because of **Rayleigh** scattering."), error: null } });
    });
    page();
    const box = screen.getByRole("textbox", { name: "Message" });
    await userEvent.type(box, "Why is the sky blue?{Enter}");
    expect(box).toHaveValue("");
    expect(await screen.findByText("Why is the sky blue?")).toBeInTheDocument();
    expect(await screen.findByText(/Because of/)).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Stop" })).toBeInTheDocument();
    await act(async () => release());
    expect(await screen.findByText("Rayleigh", { selector: "strong" })).toBeInTheDocument();
    expect(screen.getByText("Thought (2 words)")).toBeInTheDocument();
    expect(screen.getByText("120 in · 30 out")).toBeInTheDocument();
    const sent = calls.find((c) => c.cmd === "chat_send")!.args.request as Record<string, unknown>;
    expect(sent.model).toBe("ollama:qwen3-vl:8b-instruct");
    expect(sent.kind).toEqual({ kind: "ask", text: "Why is the sky blue?", images: [] });
    // Loaded when the question was saved and once when the answer ended: `finished` and the
    // command's return both end it, and share one load.
    await vi.waitFor(() => expect(screen.queryByRole("button", { name: "Stop" })).toBeNull());
    expect(calls.filter((c) => c.cmd === "conversation_view")).toHaveLength(2);
  });

  it("comes back to an answer still being written when the page is opened again, with its Stop", async () => {
    const save = backend(() => {});
    // Left mid-answer (Settings, mini mode, a freed page): the saved answer is still `streaming`.
    save([message(1, "user", "Tell me a story"), message(2, "assistant", "Once", { status: "streaming" })]);
    let channel: { onmessage: Emit } | null = null;
    onCommand("chat_attach", (args) => {
      channel = args.onEvent as { onmessage: Emit };
      // What the page missed comes first, then the live events.
      channel.onmessage({ ...started(2), data: { ...(started(2).data as object), run_id: "r-live" } } as TurnEvent);
      channel.onmessage({ event: "text", data: "Once upon a time" });
      return true;
    });
    page("/chat/c1");
    expect(await screen.findByText(/Once upon a time/)).toBeInTheDocument();
    expect(calls.find((c) => c.cmd === "chat_attach")?.args.conversationId).toBe("c1");
    // Its Stop and Esc reach the run, and the composer holds a second question back.
    await userEvent.keyboard("{Escape}");
    expect(calls.filter((c) => c.cmd === "chat_stop").map((c) => c.args)).toEqual([{ runId: "r-live" }]);
    expect(screen.getByRole("button", { name: "Stop" })).toBeInTheDocument();
    save([message(1, "user", "Tell me a story"), message(2, "assistant", "Once upon a time.", { status: "stopped" })]);
    await act(async () => channel!.onmessage({ event: "finished", data: { message: message(2, "assistant", "Once upon a time.", { status: "stopped" }), error: null } }));
    await vi.waitFor(() => expect(screen.queryByRole("button", { name: "Stop" })).toBeNull());
    expect(screen.getByText("Once upon a time.")).toBeInTheDocument();
  });

  it("reloads instead when the answer ended before it could be followed", async () => {
    const save = backend(() => {});
    save([message(1, "user", "Hi"), message(2, "assistant", "", { status: "streaming" })]);
    onCommand("chat_attach", () => {
      save([message(1, "user", "Hi"), message(2, "assistant", "Hello there.")]);
      return false;
    });
    page("/chat/c1");
    expect(await screen.findByText("Hello there.")).toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Stop" })).toBeNull();
  });

  it("says what to do when Enter is pressed with no model, and keeps the text", async () => {
    backend(() => {});
    onCommand("models_list", () => ({ providers: [{ provider: "ollama", error: "Ollama is not running", models: [] }], default_model: null }));
    page();
    const box = screen.getByRole("textbox", { name: "Message" });
    await userEvent.type(box, "Hello?{Enter}");
    expect(await screen.findByText(/No model to answer yet/)).toBeInTheDocument();
    expect(box).toHaveValue("Hello?");
    expect(calls.some((c) => c.cmd === "chat_send")).toBe(false);
  });

  it("keeps the model picked when the page is left and opened again, and shows that model's context", async () => {
    backend(() => {});
    const first = page();
    const picker = await screen.findByRole("combobox", { name: "Model" });
    await vi.waitFor(() => expect(picker).toHaveValue("ollama:qwen3-vl:8b-instruct"));
    expect(screen.getByLabelText("Context used")).toHaveTextContent("/ 32K");
    await userEvent.selectOptions(picker, "ollama:llama3.2:3b");
    expect(screen.getByLabelText("Context used")).toHaveTextContent("/ 8K");
    first.unmount();
    page();
    await vi.waitFor(() => expect(screen.getByRole("combobox", { name: "Model" })).toHaveValue("ollama:llama3.2:3b"));
  });

  it("counts the draft in the gauge and asks once before sending past the model's context", async () => {
    const send = backend(() => {});
    send([]);
    page();
    await vi.waitFor(() => expect(screen.getByRole("combobox", { name: "Model" })).toHaveValue("ollama:qwen3-vl:8b-instruct"));
    await userEvent.selectOptions(screen.getByRole("combobox", { name: "Model" }), "ollama:llama3.2:3b");
    const box = screen.getByRole("textbox", { name: "Message" });
    // About 10 000 tokens, past llama3.2's 8192.
    fireEvent.change(box, { target: { value: "word ".repeat(8000) } });
    expect(screen.getByLabelText("Context used")).toHaveTextContent("10K / 8K");
    fireEvent.keyDown(box, { key: "Enter" });
    expect(await screen.findByText(/reads 8,192: what does not fit is left out/)).toBeInTheDocument();
    expect(calls.some((c) => c.cmd === "chat_send")).toBe(false);
    fireEvent.keyDown(box, { key: "Enter" });
    await vi.waitFor(() => expect(calls.some((c) => c.cmd === "chat_send")).toBe(true));
  });

  it("folds a very long question, and unfolds it on request", async () => {
    const save = backend(() => {});
    const long = `START ${"x".repeat(9000)} END`;
    save([message(1, "user", long), message(2, "assistant", "Noted.")]);
    page("/chat/c1");
    const more = await screen.findByRole("button", { name: `Show all ${long.length.toLocaleString()} characters` });
    expect(screen.getByText(/^START/)).not.toHaveTextContent("END");
    await userEvent.click(more);
    expect(screen.getByText(/^START/)).toHaveTextContent("END");
    expect(screen.getByRole("button", { name: "Show less" })).toHaveAttribute("aria-expanded", "true");
  });

  it("opens the images a question was sent with from its chip, and closes them with Esc", async () => {
    const save = backend(() => {});
    const v = view([message(1, "user", "What is this?"), message(2, "assistant", "A cat.")]);
    v.messages[0].attachments = [
      { id: 7, message_id: 1, kind: "image", path: "ab.png", mime: "image/png", bytes: 10, name: null },
      { id: 8, message_id: 1, kind: "file", path: "cd.png", mime: "image/png", bytes: 99, name: null },
    ];
    save([]);
    onCommand("conversation_view", () => v);
    onCommand("attachment_image", ({ id }) => `data:image/png;base64,${String(id)}`);
    page("/chat/c1");
    await userEvent.click(await screen.findByRole("button", { name: "1 image" }));
    const dialog = await screen.findByRole("dialog", { name: "Images sent with the question" });
    expect(await within(dialog).findByRole("img", { name: "Image 1" })).toHaveAttribute("src", "data:image/png;base64,7");
    expect(calls.filter((c) => c.cmd === "attachment_image").map((c) => c.args)).toEqual([{ conversationId: "c1", id: 7 }]);
    await userEvent.keyboard("{Escape}");
    expect(screen.queryByRole("dialog")).toBeNull();
  });

  it("stops with the Stop button and with Esc", async () => {
    backend(async (emit, args) => {
      emit(started(2));
      emit({ event: "text", data: "Partial" });
      await new Promise(() => {}); // never finishes on its own
      void args;
    });
    page();
    await userEvent.type(screen.getByRole("textbox", { name: "Message" }), "Go{Enter}");
    await userEvent.click(await screen.findByRole("button", { name: "Stop" }));
    await userEvent.keyboard("{Escape}");
    const stops = calls.filter((c) => c.cmd === "chat_stop");
    const runId = (calls.find((c) => c.cmd === "chat_send")!.args.request as { run_id: string }).run_id;
    expect(stops.length).toBeGreaterThanOrEqual(2);
    expect(stops[0].args).toEqual({ runId });
  });

  it("keeps one Esc listener while an answer streams, instead of one per frame", async () => {
    let emit: Emit = () => {};
    backend(async (e) => {
      emit = e;
      e(started(2));
      await new Promise(() => {});
    });
    page();
    await userEvent.type(screen.getByRole("textbox", { name: "Message" }), "Go{Enter}");
    await screen.findByRole("button", { name: "Stop" });
    const added = vi.spyOn(window, "addEventListener");
    for (const word of ["one ", "two ", "three ", "four ", "five"]) {
      await act(async () => {
        emit({ event: "text", data: word });
        await new Promise((r) => requestAnimationFrame(() => r(null)));
      });
    }
    expect(await screen.findByText(/one two three four five/)).toBeInTheDocument();
    expect(added.mock.calls.filter(([type]) => type === "keydown")).toHaveLength(0);
    added.mockRestore();
    await userEvent.keyboard("{Escape}");
    expect(calls.filter((c) => c.cmd === "chat_stop")).toHaveLength(1);
  });

  it("says so when Stop finds no run while the answer still streams", async () => {
    backend(async (emit) => {
      emit(started(2));
      emit({ event: "text", data: "Partial" });
      await new Promise(() => {});
    });
    onCommand("chat_stop", () => false);
    page();
    await userEvent.type(screen.getByRole("textbox", { name: "Message" }), "Go{Enter}");
    await userEvent.click(await screen.findByRole("button", { name: "Stop" }));
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("Could not stop the answer");
    expect(alert).toHaveTextContent("found no answer running");
    // Still streaming, so Stop is still there to try again.
    expect(screen.getByRole("button", { name: "Stop" })).toBeInTheDocument();
  });

  it("says why when the Stop command fails", async () => {
    backend(async (emit) => {
      emit(started(2));
      await new Promise(() => {});
    });
    onCommand("chat_stop", () => {
      throw { kind: "unavailable", message: "the engine is gone" };
    });
    page();
    await userEvent.type(screen.getByRole("textbox", { name: "Message" }), "Go{Enter}");
    await screen.findByRole("button", { name: "Stop" });
    await userEvent.keyboard("{Escape}");
    expect(await screen.findByRole("alert")).toHaveTextContent("the engine is gone");
  });

  it("keeps the text when the message could not be sent, and says why", async () => {
    backend(() => {
      throw { kind: "provider", message: "there is no API key for anthropic", provider_kind: "missing_key" };
    });
    page();
    const box = screen.getByRole("textbox", { name: "Message" });
    await userEvent.type(box, "Important question{Enter}");
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("no API key for anthropic");
    // The kind from the engine picks the next step.
    expect(alert).toHaveTextContent("Add a key in Settings → Models.");
    expect(box).toHaveValue("Important question");
  });

  it("refuses a giant paste without freezing, and says how big it was", async () => {
    backend(() => {});
    page();
    const box = screen.getByRole("textbox", { name: "Message" });
    const huge = "x".repeat(1_000_001);
    fireEvent.paste(box, { clipboardData: { files: [], getData: () => huge } });
    expect(screen.getByRole("alert")).toHaveTextContent("1,000,001 characters");
    expect(box).toHaveValue("");
  });

  it("regenerates the last answer and edits the last question with the up arrow", async () => {
    const save = backend(() => {});
    save([message(1, "user", "First question"), message(2, "assistant", "First answer")]);
    page("/chat/c1");
    await userEvent.click(await screen.findByRole("button", { name: "Regenerate" }));
    let request = calls.filter((c) => c.cmd === "chat_send").at(-1)!.args.request as { kind: unknown; conversation_id: string };
    expect(request.kind).toEqual({ kind: "regenerate", message_id: 2 });
    expect(request.conversation_id).toBe("c1");

    const box = screen.getByRole("textbox", { name: "Message" });
    await userEvent.click(box);
    await userEvent.keyboard("{ArrowUp}");
    expect(box).toHaveValue("First question");
    expect(screen.getByText(/Editing your last question/)).toBeInTheDocument();
    await userEvent.clear(box);
    await userEvent.type(box, "Better question{Enter}");
    request = calls.filter((c) => c.cmd === "chat_send").at(-1)!.args.request as { kind: unknown; conversation_id: string };
    expect(request.kind).toEqual({ kind: "edit", message_id: 1, text: "Better question" });
  });

  it("renders the newest messages of a long conversation and shows earlier ones on request", async () => {
    const save = backend(() => {});
    const long = Array.from({ length: 50 }, (_, i) => message(i + 1, i % 2 ? "assistant" : "user", `Message number ${i + 1}`));
    save(long);
    page("/chat/c1");
    expect(await screen.findByText("Message number 50")).toBeInTheDocument();
    expect(screen.getByText("Message number 11")).toBeInTheDocument();
    expect(screen.queryByText("Message number 10")).toBeNull();
    await userEvent.click(screen.getByRole("button", { name: "Show 10 earlier messages (10 not shown)" }));
    expect(screen.getByText("Message number 1")).toBeInTheDocument();
    expect(screen.queryByRole("button", { name: /earlier messages/ })).toBeNull();
  });

  it("shows a failed answer as a card with what to do next", async () => {
    const save = backend(() => {});
    save([message(1, "user", "Hello?"), message(2, "assistant", "", { status: "error", error: "Ollama is not reachable at http://127.0.0.1:11434." })]);
    page("/chat/c1");
    const card = await screen.findByRole("alert");
    expect(card).toHaveTextContent("Ollama is not reachable");
  });

  it("picks the next step on a failed answer by its kind", async () => {
    const save = backend(async (emit) => {
      emit(started(2));
      const failed = message(2, "assistant", "", { status: "error", error: "anthropic is rate limiting requests" });
      save([message(1, "user", "Go"), failed]);
      emit({ event: "finished", data: { message: failed, error: { kind: "rate_limited", message: "anthropic is rate limiting requests; try again in 20 s" } } });
    });
    page();
    await userEvent.type(screen.getByRole("textbox", { name: "Message" }), "Go{Enter}");
    const card = await screen.findByRole("alert");
    expect(card).toHaveTextContent("try again in 20 s");
    expect(card).toHaveTextContent("Wait a moment, then regenerate.");
  });

  it("offers the models, starts on the default, and shows the context used", async () => {
    const save = backend(() => {});
    save([message(1, "user", "Hi"), message(2, "assistant", "Hello")]);
    page("/chat/c1");
    const select = await screen.findByRole("combobox", { name: "Model" });
    // The picker shows before the models arrive; it then starts on the default.
    await vi.waitFor(() => expect(select).toHaveValue("ollama:qwen3-vl:8b-instruct"));
    expect(within(screen.getByRole("combobox", { name: "Model" })).getAllByRole("option").map((o) => o.textContent)).toEqual(["ollama:qwen3-vl:8b-instruct", "ollama:llama3.2:3b"]);
    expect(screen.getByLabelText("Context used")).toHaveTextContent("150 / 32K");
    await userEvent.selectOptions(select, "ollama:llama3.2:3b");
    await userEvent.type(screen.getByRole("textbox", { name: "Message" }), "Next{Enter}");
    const request = calls.filter((c) => c.cmd === "chat_send").at(-1)!.args.request as { model: string };
    expect(request.model).toBe("ollama:llama3.2:3b");
  });

  it("keeps counting the context after an answer was stopped", async () => {
    const save = backend(() => {});
    const stopped = { status: "stopped" as const, input_tokens: null, output_tokens: null };
    save([message(1, "user", "Hi"), message(2, "assistant", "Hello"), message(3, "user", "More"), message(4, "assistant", "Partly", stopped)]);
    page("/chat/c1");
    // The last answer with usage counted 150; "More" and "Partly" add about 3.
    await vi.waitFor(() => expect(screen.getByLabelText("Context used")).toHaveTextContent("153 / 32K"));
  });

  it("a new chat opened while an answer streams starts empty, and the answer ends in its own chat", async () => {
    let release!: () => void;
    const save = backend(async (emit) => {
      save([message(1, "user", "Hi"), message(2, "assistant", "Hello"), message(3, "user", "More"), message(4, "assistant", "", { status: "streaming" })]);
      emit(started(4));
      emit({ event: "usage", data: { input_tokens: 900, output_tokens: 100 } });
      emit({ event: "text", data: "Streaming on" });
      await new Promise<void>((r) => (release = r));
      save([message(1, "user", "Hi"), message(2, "assistant", "Hello"), message(3, "user", "More"), message(4, "assistant", "Streaming on.")]);
      emit({ event: "finished", data: { message: message(4, "assistant", "Streaming on."), error: null } });
    });
    save([message(1, "user", "Hi"), message(2, "assistant", "Hello")]);
    page("/chat/c1", true);
    await userEvent.type(await screen.findByRole("textbox", { name: "Message" }), "More{Enter}");
    expect(await screen.findByText(/Streaming on/)).toBeInTheDocument();
    await vi.waitFor(() => expect(screen.getByLabelText("Context used")).toHaveTextContent("1K / 32K"));
    await userEvent.click(screen.getByRole("button", { name: "to /" }));
    await vi.waitFor(() => expect(screen.queryByText(/Streaming on/)).toBeNull());
    expect(screen.getByLabelText("Context used")).toHaveTextContent("0 / 32K");
    expect(screen.queryByRole("button", { name: "Stop" })).toBeNull();
    // Esc in the new chat stops nothing; the answer ends where it was asked, and what it still
    // streams does not show here.
    await userEvent.keyboard("{Escape}");
    expect(calls.some((c) => c.cmd === "chat_stop")).toBe(false);
    await act(async () => {
      const channel = calls.find((c) => c.cmd === "chat_send")!.args.onEvent as { onmessage: Emit };
      channel.onmessage({ event: "text", data: " and on" });
      release();
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(screen.queryByText(/Streaming on|and on/)).toBeNull();
    expect(screen.getByRole("heading", { name: "Ask anything" })).toBeInTheDocument();
  });

  it("estimates the context of a first answer stopped before any usage came", async () => {
    const save = backend(() => {});
    const stopped = { status: "stopped" as const, input_tokens: null, output_tokens: null };
    save([message(1, "user", "x".repeat(400)), message(2, "assistant", "y".repeat(400), stopped)]);
    page("/chat/c1");
    await vi.waitFor(() => expect(screen.getByLabelText("Context used")).toHaveTextContent("200 / 32K"));
  });

  it("finds a conversation's model in the list however it was spelled", async () => {
    const save = backend(() => {});
    // `perch ask --model ollama:Llama3.2:3B` saved the name as typed; the list says llama3.2:3b.
    save([message(1, "user", "Hi"), message(2, "assistant", "Hello")], "ollama:Llama3.2:3B");
    page("/chat/c1");
    const select = await screen.findByRole("combobox", { name: "Model" });
    await screen.findByRole("option", { name: "ollama:llama3.2:3b" });
    expect(select).toHaveValue("ollama:llama3.2:3b");
    expect(within(select).getAllByRole("option")).toHaveLength(2);
  });

  it("opens file references of an answer that the engine found in the folders, and says why others cannot open", async () => {
    const save = backend(() => {});
    save([message(1, "user", "Where is login?"), message(2, "assistant", "In [`src/auth.rs:45`][], not [`../secret:1`][].")]);
    onCommand("chat_references", ({ messageId }) => [
      { target: "src/auth.rs:45", path: "src/auth.rs", line: 45, end_line: null, problem: null },
      { target: "../secret:1", path: "../secret", line: 1, end_line: null, problem: `../secret is outside your folders (message ${messageId})` },
    ]);
    let fail = false;
    onCommand("chat_open_reference", () => {
      if (fail) throw { kind: "external", message: 'the editor "code" could not be started' };
      return null;
    });
    page("/chat/c1");
    const open = await screen.findByRole("button", { name: "src/auth.rs:45" });
    const refused = screen.getByText("../secret:1").closest(".file-ref");
    expect(refused).toHaveAttribute("title", "../secret:1: ../secret is outside your folders (message 2)");
    await userEvent.click(open);
    expect(calls.find((c) => c.cmd === "chat_open_reference")?.args).toEqual({ messageId: 2, target: "src/auth.rs:45" });
    fail = true;
    await userEvent.click(open);
    expect(await screen.findByRole("alert")).toHaveTextContent("could not be started");
  });

  it("asks about references only for answers that have some", async () => {
    const save = backend(() => {});
    save([message(1, "user", "Hi"), message(2, "assistant", "Hello, see `src/main.rs` and https://example.com:8080.")]);
    onCommand("chat_references", () => []);
    page("/chat/c1");
    await screen.findByText(/Hello, see/);
    expect(calls.filter((c) => c.cmd === "chat_references")).toHaveLength(0);
  });

  it("shows a remote image in an answer as a placeholder, never loading it", async () => {
    const save = backend(() => {});
    save([message(1, "user", "Hi"), message(2, "assistant", "Here: ![chart](https://stats.example/c.png)")]);
    page("/chat/c1");
    const placeholder = await screen.findByRole("button", { name: /image from stats\.example/ });
    expect(placeholder).toHaveClass("remote-image");
    expect(document.querySelector(".message.assistant img")).toBeNull();
  });

  describe("screenshots", () => {
    const shot = (id: string, source = "Monitor LEFT"): Capture => ({
      id,
      source,
      width: 2560,
      height: 1440,
      model_width: 1568,
      model_height: 882,
      format: "png",
      model_bytes: 1234,
      created_at: 0,
      thumbnail: "data:image/jpeg;base64,AAAA",
    });

    /** The shelf as the engine keeps it: `chat_send` takes the chips it was given off it. */
    function shelf(initial: Capture[]) {
      let pending = initial;
      onCommand("captures_pending", () => pending);
      onCommand("capture_remove", ({ id }) => {
        pending = pending.filter((c) => c.id !== id);
        return null;
      });
      onCommand("capture_view", () => "data:image/png;base64,BBBB");
      onCommand("capture_copy", () => null);
      return {
        sent: () => (pending = []),
        set: (next: Capture[]) => (pending = next),
        pending: () => pending,
      };
    }

    it("shows chips with thumbnails, views one large, copies it, and removes another", async () => {
      backend(() => {});
      shelf([shot("a"), shot("b", "Region 400 x 300")]);
      page();
      const chip = await screen.findByRole("button", { name: "View Region 400 x 300" });
      expect(chip.querySelector("img")).toHaveAttribute("src", "data:image/jpeg;base64,AAAA");
      await userEvent.click(chip);
      const viewer = await screen.findByRole("dialog", { name: "Region 400 x 300" });
      expect(await within(viewer).findByRole("img")).toHaveAttribute("src", "data:image/png;base64,BBBB");
      // The sizes are numbers in the UI's language ("2,560" in English), or plain.
      expect(viewer).toHaveTextContent(/2,?560 x 1,?440 \(sent as 1,?568 x 882\)/);
      await userEvent.click(within(viewer).getByRole("button", { name: "Copy" }));
      expect(calls.find((c) => c.cmd === "capture_copy")?.args).toEqual({ id: "b" });
      expect(await within(viewer).findByRole("status")).toHaveTextContent("Copied");
      await userEvent.keyboard("{Escape}");
      expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
      await userEvent.click(screen.getByRole("button", { name: "Remove Monitor LEFT" }));
      expect(calls.find((c) => c.cmd === "capture_remove")?.args).toEqual({ id: "a" });
      expect(screen.queryByRole("button", { name: "View Monitor LEFT" })).not.toBeInTheDocument();
    });

    it("sends the chips with the question by id, then clears them", async () => {
      const held: { shelf?: ReturnType<typeof shelf> } = {};
      const save = backend(() => {
        held.shelf!.sent();
        save([message(1, "user", "What is this?"), message(2, "assistant", "A chart.")]);
      });
      held.shelf = shelf([shot("a")]);
      page();
      await screen.findByRole("button", { name: "View Monitor LEFT" });
      await userEvent.type(screen.getByRole("textbox", { name: "Message" }), "What is this?{Enter}");
      const sent = calls.find((c) => c.cmd === "chat_send")!.args.request as { kind: { images: unknown[] } };
      expect(sent.kind.images).toEqual([{ name: "Monitor LEFT", mime: "image/png", base64: "", capture: "a" }]);
      await vi.waitFor(() => expect(screen.queryByRole("button", { name: "View Monitor LEFT" })).not.toBeInTheDocument());
    });

    it("a chip stays with the chat it was taken in: another chat does not send it and can bring it", async () => {
      const held: { shelf?: ReturnType<typeof shelf> } = {};
      const save = backend((_, args) => {
        // The engine takes the chips sent, and only those, off the shelf.
        const images = (args.request as { kind: { images: { capture: string | null }[] } }).kind.images;
        held.shelf!.set(held.shelf!.pending().filter((c) => !images.some((i) => i.capture === c.id)));
        save([message(1, "user", "Hi"), message(2, "assistant", "Hello")]);
      });
      save([message(1, "user", "Hi"), message(2, "assistant", "Hello")]);
      held.shelf = shelf([shot("a")]);
      page("/chat/c1", true);
      await screen.findByRole("button", { name: "View Monitor LEFT" });
      // Ctrl+N: the new chat has no chip, and says where it is.
      await userEvent.click(screen.getByRole("button", { name: "to /" }));
      expect(await screen.findByText("A screenshot waits in the chat where it was taken.")).toBeInTheDocument();
      expect(screen.queryByRole("button", { name: "View Monitor LEFT" })).not.toBeInTheDocument();
      await userEvent.type(screen.getByRole("textbox", { name: "Message" }), "Unrelated question{Enter}");
      const sent = calls.find((c) => c.cmd === "chat_send")!.args.request as { kind: { images: unknown[] } };
      expect(sent.kind.images).toEqual([]);
      // Back in the chat it was taken in, it is still there.
      await userEvent.click(screen.getByRole("button", { name: "to /chat/c1" }));
      expect(await screen.findByRole("button", { name: "View Monitor LEFT" })).toBeInTheDocument();
      expect(screen.queryByText(/waits in the chat/)).not.toBeInTheDocument();
      // Taken to a new chat on purpose: "Bring here".
      await userEvent.click(screen.getByRole("button", { name: "to /" }));
      await userEvent.click(await screen.findByRole("button", { name: "Bring here" }));
      expect(await screen.findByRole("button", { name: "View Monitor LEFT" })).toBeInTheDocument();
      await userEvent.type(screen.getByRole("textbox", { name: "Message" }), "What is this?{Enter}");
      const second = calls.filter((c) => c.cmd === "chat_send").at(-1)!.args.request as { kind: { images: unknown[] } };
      expect(second.kind.images).toEqual([{ name: "Monitor LEFT", mime: "image/png", base64: "", capture: "a" }]);
    });

    it("pictures and files attached in one chat wait there while another is open", async () => {
      backend(() => {});
      filesBackend();
      page("/chat/c1", true);
      const box = screen.getByRole("textbox", { name: "Message" });
      await userEvent.type(box, "@main");
      await userEvent.click(await screen.findByRole("option", { name: /main\.rs/ }));
      expect(await screen.findByText("main.rs", { selector: ".file-chip-name" })).toBeInTheDocument();
      await userEvent.click(screen.getByRole("button", { name: "to /" }));
      await vi.waitFor(() => expect(screen.queryByText("main.rs", { selector: ".file-chip-name" })).not.toBeInTheDocument());
      await userEvent.click(screen.getByRole("button", { name: "to /chat/c1" }));
      expect(await screen.findByText("main.rs", { selector: ".file-chip-name" })).toBeInTheDocument();
    });

    it("catches a model without vision before sending and offers the vision models", async () => {
      backend(() => {});
      shelf([shot("a")]);
      page();
      const model = await screen.findByRole("combobox", { name: "Model" });
      await screen.findByRole("option", { name: "ollama:llama3.2:3b" });
      await userEvent.selectOptions(model, "ollama:llama3.2:3b");
      await screen.findByRole("button", { name: "View Monitor LEFT" });
      const box = screen.getByRole("textbox", { name: "Message" });
      await userEvent.type(box, "What is this?{Enter}");
      const alert = await screen.findByText(/cannot read images/, { selector: ".vision-needed" });
      expect(calls.some((c) => c.cmd === "chat_send")).toBe(false);
      expect(box).toHaveValue("What is this?");
      await userEvent.click(within(alert).getByRole("button", { name: "ollama:qwen3-vl:8b-instruct" }));
      expect(screen.getByRole("combobox", { name: "Model" })).toHaveValue("ollama:qwen3-vl:8b-instruct");
      await userEvent.type(box, "{Enter}");
      const sent = calls.find((c) => c.cmd === "chat_send")!.args.request as { model: string };
      expect(sent.model).toBe("ollama:qwen3-vl:8b-instruct");
    });

    it("a capture from the shortcut appears as a chip with the cursor in the box; a failure is explained", async () => {
      backend(() => {});
      const s = shelf([]);
      page();
      const box = screen.getByRole("textbox", { name: "Message" });
      await screen.findByRole("combobox", { name: "Capture mode" });
      s.set([shot("n", "Window: Editor")]);
      await act(async () => emitEvent("captures-changed", { captures: [shot("n", "Window: Editor")], focus: true }));
      expect(await screen.findByRole("button", { name: "View Window: Editor" })).toBeInTheDocument();
      expect(box).toHaveFocus();
      await act(async () => emitEvent("capture-failed", { message: "the capture came back all black." }));
      expect(await screen.findByText(/came back all black/)).toBeInTheDocument();
    });

    it("with auto-screenshot on, a question without a chip captures the screen first", async () => {
      const held: { shelf?: ReturnType<typeof shelf> } = {};
      const save = backend(() => {
        held.shelf!.sent();
        save([message(1, "user", "Hm?"), message(2, "assistant", "Yes.")]);
      });
      onCommand("get_settings", () => ({ ...SETTINGS, capture: { ...SETTINGS.capture, auto_screenshot: true } }));
      held.shelf = shelf([]);
      onCommand("capture_start", ({ mode }) => {
        expect(mode).toBe("fullscreen");
        held.shelf!.set([shot("auto")]);
        return "Captured Monitor LEFT (2560 x 1440).";
      });
      page();
      await screen.findByRole("combobox", { name: "Capture mode" });
      await userEvent.type(screen.getByRole("textbox", { name: "Message" }), "Hm?{Enter}");
      await vi.waitFor(() => expect(calls.some((c) => c.cmd === "chat_send")).toBe(true));
      const sent = calls.find((c) => c.cmd === "chat_send")!.args.request as { kind: { images: { capture: string }[] } };
      expect(sent.kind.images.map((i) => i.capture)).toEqual(["auto"]);
    });

    it("the mode switch beside the input saves the capture mode", async () => {
      backend(() => {});
      shelf([]);
      onCommand("set_capture_settings", () => []);
      page();
      await userEvent.selectOptions(await screen.findByRole("combobox", { name: "Capture mode" }), "precision");
      const saved = calls.find((c) => c.cmd === "set_capture_settings")!.args.settings as { mode: string };
      expect(saved.mode).toBe("precision");
    });
  });

  describe("attached files", () => {
    async function pick(box: HTMLElement, query: string, name: string) {
      await userEvent.type(box, query);
      await screen.findByRole("option", { name: new RegExp(`^${name}`) });
      await userEvent.keyboard("{Enter}");
      await screen.findByText(name, { selector: ".file-chip-name" });
    }

    it("sends picked files with the question, shows them on it while it is sent, and clears the chips after", async () => {
      let release!: () => void;
      const save = backend(async (emit) => {
        await new Promise<void>((r) => (release = r));
        save([message(1, "user", "Review these"), message(2, "assistant", "Looks fine.")]);
        emit({ event: "finished", data: { message: message(2, "assistant", "Looks fine."), error: null } });
      });
      filesBackend();
      page();
      const box = screen.getByRole("textbox", { name: "Message" });
      await pick(box, "@main", "main.rs");
      await userEvent.type(box, "@big");
      await screen.findByRole("option", { name: /^big\.log/ });
      await userEvent.keyboard("{Enter}");
      await userEvent.click(await screen.findByRole("button", { name: "Attach the first 2,000 lines" }));
      await screen.findByText("big.log", { selector: ".file-chip-name" });
      await userEvent.type(box, "Review these{Enter}");
      const sent = calls.find((c) => c.cmd === "chat_send")!.args.request as { kind: unknown };
      expect(sent.kind).toEqual({
        kind: "ask",
        text: "Review these",
        images: [],
        files: [
          { path: `${ROOT}/src/main.rs`, first_lines: null },
          { path: `${ROOT}/logs/big.log`, first_lines: 2000 },
        ],
      });
      // The question on its way shows its files; the composer's chips are gone.
      const question = await screen.findByRole("article", { name: "Question" });
      expect(within(question).getByText("main.rs")).toHaveAttribute("title", `${ROOT}/src/main.rs`);
      expect(screen.queryByText("main.rs", { selector: ".file-chip-name" })).toBeNull();
      await act(async () => release());
      expect(await screen.findByText("Looks fine.")).toBeInTheDocument();
      expect(screen.queryByText("big.log", { selector: ".file-chip-name" })).toBeNull();
    });

    it("keeps the chips and the text when the question could not be sent", async () => {
      backend(() => {
        throw { kind: "not_found", message: "/home/me/proj/src/main.rs is gone: it was moved or deleted since it was picked." };
      });
      filesBackend();
      page();
      const box = screen.getByRole("textbox", { name: "Message" });
      await pick(box, "@main", "main.rs");
      await userEvent.type(box, "Explain{Enter}");
      expect(await screen.findByRole("alert")).toHaveTextContent("moved or deleted");
      expect(box).toHaveValue("Explain");
      expect(screen.getByText("main.rs", { selector: ".file-chip-name" })).toBeInTheDocument();
      // Sending again sends the file again.
      await userEvent.type(box, "{Enter}");
      const sends = calls.filter((c) => c.cmd === "chat_send");
      expect(sends).toHaveLength(2);
      expect((sends[1].args.request as { kind: { files: unknown } }).kind.files).toEqual([{ path: `${ROOT}/src/main.rs`, first_lines: null }]);
    });

    it("shows the files of a reopened question as chips, and no chip for a capture's original", async () => {
      const save = backend(() => {});
      save([message(1, "user", "What does this do?"), message(2, "assistant", "It starts the app.")]);
      const stored = view([message(1, "user", "What does this do?"), message(2, "assistant", "It starts the app.")]);
      const attachment = { message_id: 1, path: "ab12.txt", mime: "text/plain", bytes: 900 };
      stored.messages[0].attachments = [
        { ...attachment, id: 1, kind: "file", name: `${ROOT}/src/main.rs` },
        { ...attachment, id: 2, kind: "image", path: "cd34.jpg", mime: "image/jpeg", name: null },
        { ...attachment, id: 3, kind: "file", path: "ef56.png", mime: "image/png", name: null },
      ];
      onCommand("conversation_view", () => stored);
      page("/chat/c1");
      const question = await screen.findByRole("article", { name: "Question" });
      const chip = await within(question).findByText("main.rs");
      expect(chip).toHaveClass("file-chip");
      expect(chip).toHaveAttribute("title", `${ROOT}/src/main.rs`);
      expect(within(question).getAllByText(/main\.rs|\.png|\.txt/)).toHaveLength(1);
      expect(within(question).getByText("1 image")).toBeInTheDocument();
    });
  });
});
