import { lazy, Suspense, useCallback, useEffect, useLayoutEffect, useRef, useState } from "react";
import { useNavigate, useParams } from "react-router";
import { plural } from "@lingui/core/macro";
import { Trans, useLingui } from "@lingui/react/macro";
import type { Message } from "../bindings";
import { AssistantMessage } from "../components/chat/AssistantMessage";
import { ConversationBar } from "../components/chat/Conversation";
import { Composer } from "../components/chat/Composer";
import { UserMessage } from "../components/chat/UserMessage";
import { SessionBanner } from "../components/terminal/SessionBanner";
import { useChat } from "../lib/chat";
import { useModels } from "../lib/models";
import { LocalOffer } from "../components/chat/LocalOffer";
import { StartAtLoginOffer } from "../components/settings/StartAtLogin";
import { useSettings } from "../lib/settings";
import { WithCode } from "../components/InlineCode";
import { useAnnouncedAnswer } from "../lib/announce";
import { lastConversation } from "../lib/shortcuts";
import { useQuestions } from "../lib/questions";
import { useTerminal } from "../lib/terminal";
import { dismissNotice } from "../lib/dictation";
import { chatKey, newChatSaved } from "../lib/chatHoldings";
import { formatNumber } from "../lib/format";
import { fileInputName } from "../lib/knowledgePicker";

// xterm.js is a quarter of the UI's code; it loads with the first command the panel shows.
const TerminalPanel = lazy(() =>
  import("../components/terminal/TerminalPanel").then((m) => ({ default: m.TerminalPanel })),
);

/** Messages rendered when a conversation opens, and how many more each "earlier" click adds: a
 * rendered answer with code and math costs the page about 1 MiB, and WebKit keeps most of it
 * after the conversation is left (measured in tests/e2e/bench/long_conversation.mjs). */
export const MESSAGE_WINDOW = 40;

/** The model picked in a conversation (`undefined`: the chat not yet saved), kept for the
 * session (sessionStorage survives the page being freed and loaded again). */
function pickedModel(id: string | undefined): string | null {
  return sessionStorage.getItem(`perch.model.${id ?? "new"}`);
}
function pickModel(id: string | undefined, model: string | null) {
  const key = `perch.model.${id ?? "new"}`;
  if (model) sessionStorage.setItem(key, model);
  else sessionStorage.removeItem(key);
}

/** The chat: the conversation in the URL (or a new one), and the composer. */
export function ChatPage() {
  const { t } = useLingui();
  const { settings } = useSettings();
  const { id } = useParams();
  const navigate = useNavigate();
  const onConversation = useCallback(
    (cid: string) => {
      // The model picked for the new chat is now this conversation's; the next new chat starts
      // from the default again.
      const picked = pickedModel(undefined);
      if (picked) pickModel(cid, picked);
      pickModel(undefined, null);
      newChatSaved(cid);
      navigate(`/chat/${cid}`, { replace: true });
    },
    [navigate],
  );
  const { state, send, regenerate, edit, stop } = useChat(id, onConversation);
  const models = useModels();
  const terminal = useTerminal();
  const questions = useQuestions();
  const conversationId = state.view?.conversation.id ?? null;
  // The model picked for this conversation stays picked when the page is left and opened
  // again (Settings, History, mini mode, a page freed while hidden).
  const [, repaint] = useState(0);
  const chosen = pickedModel(id);
  const setChosen = (model: string) => {
    pickModel(id, model);
    repaint((n) => n + 1);
  };
  const [editing, setEditing] = useState<Message | null>(null);
  const list = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);
  useEffect(() => {
    lastConversation.id = id ?? null;
  }, [id]);
  // A microphone's note belongs to the chat it was shown in, not to the next one.
  const opened = useRef(id);
  useEffect(() => {
    if (opened.current !== id) dismissNotice();
    opened.current = id;
  }, [id]);

  // The answer being streamed is shown from the stream, not from its saved placeholder.
  const messages = (state.view?.messages ?? []).filter((m) => m.message.status !== "streaming");
  // Only the newest messages are rendered; older ones on request, a window at a time.
  const [windowed, setWindowed] = useState({ id, size: MESSAGE_WINDOW });
  if (windowed.id !== id) setWindowed({ id, size: MESSAGE_WINDOW });
  const hidden = Math.max(0, messages.length - windowed.size);
  const shown = messages.slice(hidden);
  const earlier = Math.min(hidden, MESSAGE_WINDOW);
  const notShown = formatNumber(hidden);
  const showEarlierLabel = t`${plural(earlier, {
    one: `Show # earlier message (${notShown} not shown)`,
    other: `Show # earlier messages (${notShown} not shown)`,
  })}`;
  // Showing earlier messages keeps the reader's place: the list grows above what they see.
  const grownFrom = useRef<number | null>(null);
  useLayoutEffect(() => {
    const el = list.current;
    if (el && grownFrom.current !== null) el.scrollTop += el.scrollHeight - grownFrom.current;
    grownFrom.current = null;
  }, [windowed.size]);
  const showEarlier = () => {
    grownFrom.current = list.current?.scrollHeight ?? null;
    setWindowed((w) => ({ ...w, size: w.size + MESSAGE_WINDOW }));
  };
  // The conversation's model as the picker lists it, however it was spelled (`perch ask
  // --model ollama:llama3.2` is the listed `ollama:llama3.2:latest`).
  const saved = state.view?.conversation.model ?? null;
  const listed = models.offered.find((m) => m.key === state.view?.model_key)?.id;
  const model = chosen ?? listed ?? saved ?? models.defaultModel;
  const lastUser = [...messages].reverse().find((m) => m.message.role === "user");
  const lastAnswer = [...messages].reverse().find((m) => m.message.role === "assistant");
  const streaming = state.streaming;
  const last = lastAnswer?.message;
  // Once, under a first answer that arrived whole: Perch is worth keeping at hand by then.
  const offerStartAtLogin =
    !streaming && last?.status === "complete" && !state.answerError && settings?.start_at_login_offered === false;
  useAnnouncedAnswer(streaming ? streaming.text : null, last ? { id: last.id, text: last.content } : null);
  // A stopped or failed answer has no usage of its own: the last one that has holds what the
  // model read up to it, and what came after is estimated (about four characters a token, as
  // the composer counts the draft), where "0" would say the conversation is empty.
  let countedAt = messages.length - 1;
  while (countedAt >= 0 && !(messages[countedAt].message.role === "assistant" && messages[countedAt].message.input_tokens !== null)) countedAt -= 1;
  const counted = countedAt >= 0 ? messages[countedAt].message : null;
  const since = messages.slice(countedAt + 1).reduce((chars, m) => chars + m.message.content.length, 0);
  const used = streaming?.usage
    ? streaming.usage.input_tokens + streaming.usage.output_tokens
    : (counted?.input_tokens ?? 0) + (counted?.output_tokens ?? 0) + Math.ceil(since / 4);
  // The context the engine reported holds for the model it ran; another one picked since has
  // its own.
  const limit =
    (state.contextLength?.model === model ? state.contextLength.tokens : null) ??
    models.offered.find((m) => m.id === model)?.context_length ??
    null;

  // Follow the answer as it grows (its text, its tool cards, a question waiting on one), unless
  // the reader scrolled up: then a button says there is more below.
  const [below, setBelow] = useState(false);
  const waiting = questions.open.length;
  useEffect(() => {
    const el = list.current;
    if (!el) return;
    if (pinned.current) el.scrollTop = el.scrollHeight;
    else if (el.scrollHeight - el.scrollTop - el.clientHeight > 40) setBelow(true);
  }, [messages.length, streaming?.text, streaming?.thinking, streaming?.toolCalls, waiting]);
  const toBottom = () => {
    const el = list.current;
    if (el) el.scrollTop = el.scrollHeight;
    pinned.current = true;
    setBelow(false);
  };

  // Esc stops the answer on screen (`stop` does nothing without one). `stop` is stable, so the
  // listener is added once, not on every streamed frame.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape" && !e.defaultPrevented) void stop();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [stop]);

  const onSend = async (
    text: string,
    images: Parameters<typeof send>[1],
    files: Parameters<typeof send>[3],
    selections: Parameters<typeof send>[4] = [],
    other?: string,
  ) => {
    const answering = other ?? model;
    if (!answering) return false;
    pinned.current = true;
    if (editing) {
      const target = editing;
      setEditing(null);
      return edit(target, text, answering);
    }
    return send(text, images, answering, files, selections);
  };

  const empty = messages.length === 0 && !streaming;
  // A question waiting on a card comes first: the panel would cover it.
  const showPanel = terminal.panelOpen && !questions.open.some((a) => a.question.kind === "tool_approval");
  return (
    <section className="chat" aria-label={t`Chat`}>
      <SessionBanner conversationId={conversationId} />
      {showPanel && (
        <Suspense fallback={null}>
          <TerminalPanel conversationId={conversationId} onClose={() => terminal.setPanelOpen(false)} />
        </Suspense>
      )}
      <div
        className="messages"
        ref={list}
        // A tab stop of its own, so the keyboard can scroll it whatever it holds (an empty
        // chat's welcome under the hands-free bar holds nothing else to focus).
        tabIndex={0}
        // Only the reader lets go of the bottom (wheel up, the scrollbar, the keys); a scroll
        // the page makes itself (content growing, the composer resizing) never does. Back at
        // the bottom, the list follows again.
        onScroll={(e) => {
          const el = e.currentTarget;
          if (el.scrollHeight - el.scrollTop - el.clientHeight < 40) {
            pinned.current = true;
            setBelow(false);
          }
        }}
        onWheel={(e) => {
          if (e.deltaY < 0) pinned.current = false;
        }}
        onPointerDown={(e) => {
          if (e.target === e.currentTarget) pinned.current = false;
        }}
        onKeyDown={(e) => {
          if (["PageUp", "ArrowUp", "Home"].includes(e.key)) pinned.current = false;
        }}
      >
        {empty && <Welcome problems={models.problems} noModel={!models.loading && !model} />}
        {hidden > 0 && (
          <button type="button" className="link earlier" onClick={showEarlier}>
            {showEarlierLabel}
          </button>
        )}
        {shown.map((m) =>
          m.message.role === "user" ? (
            <UserMessage
              key={m.message.id}
              view={m}
              canEdit={!streaming && m === lastUser}
              onEdit={(message) => setEditing(message)}
            />
          ) : (
            <AssistantMessage
              key={m.message.id}
              view={m}
              error={m === lastAnswer ? state.answerError : null}
              canRegenerate={!streaming && m === lastAnswer && !!model}
              onRegenerate={(message) => model && void regenerate(message, model)}
            />
          ),
        )}
        {streaming && !streaming.saved && streaming.question !== null && (
          <UserMessage
            pending={{ text: streaming.question, images: streaming.images.length, files: streaming.files.map(fileInputName) }}
            canEdit={false}
          />
        )}
        {streaming && <AssistantMessage streaming={streaming} canRegenerate={false} />}
        {offerStartAtLogin && (
          <StartAtLoginOffer
            // It appears once its answer is in: followed into view like the answer itself.
            onShown={() => {
              const el = list.current;
              if (el && pinned.current) el.scrollTop = el.scrollHeight;
            }}
          />
        )}
      </div>
      {state.sendError && (
        <div className="error-card inline" role="alert">
          <strong>
            <Trans>Not sent</Trans>
          </strong>
          <p>{state.sendError.message}</p>
          {state.sendError.next && <p className="muted">{state.sendError.next}</p>}
        </div>
      )}
      {/* The dock keeps "New content below" just above the composer, however tall it grows. */}
      <div className="composer-dock">
        <ConversationBar answering={!!streaming} onStopAnswer={stop} />
        {below && (
          <button type="button" className="new-below" onClick={toBottom}>
            <Trans>↓ New content below</Trans>
          </button>
        )}
        <Composer
          chat={chatKey(id)}
          streaming={!!streaming}
          models={models.offered}
          model={model}
          onModel={setChosen}
          usage={{ used, limit }}
          editing={editing ? editing.content : null}
          onSend={onSend}
          onStop={stop}
          onEditLast={() => lastUser && setEditing(lastUser.message)}
          onCancelEdit={() => setEditing(null)}
          tools={
            // In the composer's row, not floating over the list: floating, it covered the last
            // answer's Regenerate and the first-run offer.
            !showPanel && (
              <button
                type="button"
                className="icon-button terminal-toggle"
                aria-label={t`Show the terminal`}
                title={t`Show the terminal`}
                onClick={() => terminal.setPanelOpen(true)}
              >
                &gt;_
              </button>
            )
          }
        />
      </div>
    </section>
  );
}

/** Key names, shown as they are on the keys: not translated, so kept out of the messages. */
/* eslint-disable lingui/no-unlocalized-strings -- key names */
const KEYS = { enter: "Enter", shift: "Shift", esc: "Esc", up: "↑", ctrl: "Ctrl", m: "M" } as const;
/* eslint-enable lingui/no-unlocalized-strings */

function Welcome({ problems, noModel }: { problems: string[]; noModel: boolean }) {
  const { enter, shift, esc, up, ctrl, m } = KEYS;
  return (
    <div className="empty-state">
      <img src="/perch.png" alt="" width={48} height={48} />
      <h1>
        <Trans>Ask anything</Trans>
      </h1>
      <p className="muted">
        <Trans>Perch sits beside your editor. Your conversations stay on this computer.</Trans>
      </p>
      {/* With no model yet, the ways to get one come first; the keys matter once one is here. */}
      {!noModel && (
        <ul className="hints">
          <li>
            <Trans comment="the placeholders are key names">
              <kbd>{enter}</kbd> sends, <kbd>{shift}</kbd>+<kbd>{enter}</kbd> adds a line, <kbd>{esc}</kbd> stops
            </Trans>
          </li>
          <li>
            <Trans comment="the placeholders are key names">
              <kbd>{up}</kbd> edits your last question · <kbd>{ctrl}</kbd>+<kbd>{shift}</kbd>+<kbd>{m}</kbd> shrinks Perch
            </Trans>
          </li>
        </ul>
      )}
      {noModel && <LocalOffer />}
      {noModel && problems.length > 0 && (
        <div className="info-card" role="status">
          <strong>
            <Trans>Or use a model you have</Trans>
          </strong>
          {problems.map((p) => (
            <p key={p}>
              <WithCode text={p} />
            </p>
          ))}
        </div>
      )}
    </div>
  );
}
