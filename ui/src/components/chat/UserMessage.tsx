import type { Message, MessageView } from "../../bindings";

interface Props {
  view?: MessageView;
  /** A question not yet saved (shown while it is sent). */
  pending?: { text: string; images: number };
  canEdit: boolean;
  onEdit?: (message: Message) => void;
}

export function UserMessage({ view, pending, canEdit, onEdit }: Props) {
  const text = view?.message.content ?? pending?.text ?? "";
  // A capture keeps its full-size original beside the copy the model read; count the images sent.
  const images = view ? view.attachments.filter((a) => a.kind === "image").length : (pending?.images ?? 0);
  return (
    <article className="message user" aria-label="Question">
      <div className="bubble">
        {images > 0 && <span className="chip">{images === 1 ? "1 image" : `${images} images`}</span>}
        <p>{text}</p>
      </div>
      {view && (
        <footer className="message-meta">
          <span className="actions">
            <button type="button" onClick={() => void navigator.clipboard?.writeText(text)}>
              Copy
            </button>
            {canEdit && onEdit && (
              <button type="button" title="Edit and resend (↑)" onClick={() => onEdit(view.message)}>
                Edit
              </button>
            )}
          </span>
        </footer>
      )}
    </article>
  );
}
