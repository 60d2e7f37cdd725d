import { useEffect, useState } from "react";
import { plural } from "@lingui/core/macro";
import { Trans, useLingui } from "@lingui/react/macro";
import { call, commands, errorMessage } from "../../ipc";
import type { Message, MessageView } from "../../bindings";
import { fileName } from "../../lib/filePicker";
import { formatNumber } from "../../lib/format";
import { useEscape } from "../../lib/useEscape";

interface Props {
  view?: MessageView;
  /** A question not yet saved (shown while it is sent). */
  pending?: { text: string; images: number; files?: string[] };
  canEdit: boolean;
  onEdit?: (message: Message) => void;
}

/** Questions longer than this show their first `FOLD_AT` characters until unfolded. */
const FOLD_LONGER_THAN = 3000;
const FOLD_AT = 1200;

export function UserMessage({ view, pending, canEdit, onEdit }: Props) {
  const { t } = useLingui();
  const text = view?.message.content ?? pending?.text ?? "";
  // A very long question (a big paste) is folded: drawn whole it costs the page and the reader.
  const [folded, setFolded] = useState(text.length > FOLD_LONGER_THAN);
  const [viewing, setViewing] = useState(false);
  // A capture keeps its full-size original beside the copy the model read; count the images sent.
  const images = view ? view.attachments.filter((a) => a.kind === "image").length : (pending?.images ?? 0);
  // Attached files are stored under their path on disk (a capture's original has no name).
  const files = view
    ? view.attachments.flatMap((a) => (a.kind === "file" && a.name ? [a.name] : []))
    : (pending?.files ?? []);
  const imageCount = t`${plural(images, { one: "# image", other: "# images" })}`;
  const characters = formatNumber(text.length);
  return (
    <article className="message user" aria-label={t({ message: "Question", comment: "the user's message in the chat" })}>
      <div className="bubble">
        {images > 0 &&
          (view ? (
            <button type="button" className="chip" onClick={() => setViewing(true)}>
              {imageCount}
            </button>
          ) : (
            <span className="chip">{imageCount}</span>
          ))}
        {files.map((path) => (
          <span key={path} className="chip file-chip" title={path}>
            {fileName(path)}
          </span>
        ))}
        <p>{folded ? `${text.slice(0, FOLD_AT)}…` : text}</p>
        {text.length > FOLD_LONGER_THAN && (
          <button type="button" className="link-button fold" aria-expanded={!folded} onClick={() => setFolded(!folded)}>
            {folded ? t`Show all ${characters} characters` : t`Show less`}
          </button>
        )}
      </div>
      {view && (
        <footer className="message-meta">
          <span className="actions">
            <button type="button" onClick={() => void navigator.clipboard?.writeText(text)}>
              <Trans comment="button: copy the question's text">Copy</Trans>
            </button>
            {canEdit && onEdit && (
              <button type="button" title={t`Edit and resend (↑)`} onClick={() => onEdit(view.message)}>
                <Trans comment="button: edit the question and send it again">Edit</Trans>
              </button>
            )}
          </span>
        </footer>
      )}
      {viewing && view && (
        <SentImages
          conversationId={view.message.conversation_id}
          ids={view.attachments.filter((a) => a.kind === "image").map((a) => a.id)}
          onClose={() => setViewing(false)}
        />
      )}
    </article>
  );
}

/** The images a question was sent with, large, one under the other; Esc or a click closes. */
function SentImages({ conversationId, ids, onClose }: { conversationId: string; ids: number[]; onClose: () => void }) {
  const { t } = useLingui();
  const [urls, setUrls] = useState<Record<number, string>>({});
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    for (const id of ids) {
      call(commands.attachmentImage(conversationId, id)).then(
        (url) => setUrls((u) => ({ ...u, [id]: url })),
        (e) => setError(errorMessage(e)),
      );
    }
  }, [conversationId, ids]);
  useEscape(onClose);
  return (
    <div className="capture-viewer" role="dialog" aria-label={t`Images sent with the question`} onClick={onClose}>
      <figure className="sent-images" onClick={(e) => e.stopPropagation()}>
        {ids.map((id, i) => {
          if (!urls[id]) return null;
          const number = formatNumber(i + 1);
          return <img key={id} src={urls[id]} alt={t`Image ${number}`} />;
        })}
        {error && (
          <p className="error small" role="alert">
            {error}
          </p>
        )}
        <figcaption>
          <button type="button" onClick={onClose}>
            <Trans>Close</Trans>
          </button>
        </figcaption>
      </figure>
    </div>
  );
}
