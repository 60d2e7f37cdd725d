import { useState } from "react";
import { SendIcon } from "../components/Icons";

const DRAFT_KEY = "perch.draft";

/** The chat page. Until a model provider is connected it shows what Perch will do. */
export function ChatPage() {
  // The draft survives navigation and restarts: nothing typed is lost.
  const [draft, setDraft] = useState(() => localStorage.getItem(DRAFT_KEY) ?? "");

  return (
    <section className="chat" aria-label="Chat">
      <div className="empty-state">
        <img src="/perch.png" alt="" width={48} height={48} />
        <h1>Ask anything</h1>
        <p className="muted">
          Perch sits beside your editor. Your conversations stay on this computer.
        </p>
        <ul className="hints">
          <li>
            <kbd>Enter</kbd> sends, <kbd>Shift</kbd>+<kbd>Enter</kbd> adds a line
          </li>
          <li>
            <kbd>Ctrl</kbd>+<kbd>Shift</kbd>+<kbd>M</kbd> shrinks Perch to a bubble
          </li>
        </ul>
      </div>
      <form className="composer" onSubmit={(e) => e.preventDefault()}>
        <textarea
          aria-label="Message"
          placeholder="No model connected yet"
          rows={2}
          value={draft}
          onChange={(e) => {
            setDraft(e.target.value);
            localStorage.setItem(DRAFT_KEY, e.target.value);
          }}
        />
        <button
          type="submit"
          className="icon-button send"
          aria-label="Send"
          title="Connect a model to send"
          disabled
        >
          <SendIcon />
        </button>
      </form>
    </section>
  );
}
