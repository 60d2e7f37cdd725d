import { useTerminal } from "../../lib/terminal";

/** Shown while session mode is on for this conversation, with a way to end it now. */
export function SessionBanner({ conversationId }: { conversationId: string | null }) {
  const { sessions, endSession } = useTerminal();
  const session = conversationId ? sessions[conversationId] : undefined;
  if (!conversationId || !session) return null;
  return (
    <div className="session-banner" role="status">
      <span>
        <strong>Session mode</strong>: commands in <span className="path">{session.folder}</span> run without asking until
        this answer ends.
      </span>
      <button type="button" onClick={() => void endSession(conversationId)}>
        End
      </button>
    </div>
  );
}
