import { Trans } from "@lingui/react/macro";
import { useTerminal } from "../../lib/terminal";

/** Shown while session mode is on for this conversation, with a way to end it now. */
export function SessionBanner({ conversationId }: { conversationId: string | null }) {
  const { sessions, endSession } = useTerminal();
  const session = conversationId ? sessions[conversationId] : undefined;
  if (!conversationId || !session) return null;
  const folder = session.folder;
  return (
    <div className="session-banner" role="status">
      <span>
        <Trans>
          <strong>Session mode</strong>: commands in <span className="path">{folder}</span> run without asking until this answer
          ends.
        </Trans>
      </span>
      <button type="button" onClick={() => void endSession(conversationId)}>
        <Trans comment="button: end the terminal session now">End</Trans>
      </button>
    </div>
  );
}
