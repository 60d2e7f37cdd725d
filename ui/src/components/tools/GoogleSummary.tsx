import { plural } from "@lingui/core/macro";
import { Trans, useLingui } from "@lingui/react/macro";
import type { ToolCallRecord } from "../../bindings";
import { formatNumber } from "../../lib/format";

/** The bundled Google server's calls, whose cards show mail and events instead of raw JSON. */
export function isGoogleCall(call: ToolCallRecord): boolean {
  return call.server === "google" && (call.tool.startsWith("gmail_") || call.tool.startsWith("calendar_"));
}

type Fields = Record<string, unknown>;

function fields(value: unknown): Fields {
  return value && typeof value === "object" && !Array.isArray(value) ? (value as Fields) : {};
}

function text(value: unknown): string {
  return typeof value === "string" ? value : typeof value === "number" ? String(value) : "";
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

const SHOWN = 8;
const BODY_PREVIEW = 600;

/** What a Google call asks (before it runs, this is what the user approves) and what it found. */
export function GoogleSummary({ call }: { call: ToolCallRecord }) {
  const args = fields(call.arguments);
  const result = call.output && !call.output.is_error ? fields(call.output.structured) : {};
  return (
    <div className="google-summary">
      <Asked tool={call.tool} args={args} />
      <Found result={result} />
    </div>
  );
}

function Asked({ tool, args }: { tool: string; args: Fields }) {
  const { t } = useLingui();
  switch (tool) {
    case "gmail_search": {
      const query = text(args.query);
      return (
        <p className="small">
          <Trans>
            Search mail for <q>{query}</q>
          </Trans>
        </p>
      );
    }
    case "gmail_send":
    case "gmail_create_draft":
      return (
        <Letter
          heading={
            tool === "gmail_send"
              ? t({ context: "email heading", message: "Send", comment: "heading: an email the model asks to send" })
              : t({ context: "email heading", message: "Save a draft", comment: "heading: an email the model asks to save as a draft" })
          }
          to={list(args.to)}
          cc={list(args.cc)}
          bcc={list(args.bcc)}
          subject={text(args.subject)}
          body={text(args.body)}
        />
      );
    case "gmail_reply":
      return (
        <>
          <p className="small muted">
            {args.reply_all ? (
              <Trans>
                In the message's thread, to its sender (or the address it asks replies to go to), copying everyone else it went to.
              </Trans>
            ) : (
              <Trans>In the message's thread, to its sender (or the address it asks replies to go to).</Trans>
            )}
          </p>
          <Letter
            heading={
              args.reply_all
                ? t({ context: "email heading", message: "Reply to all", comment: "heading: an email reply the model asks to send" })
                : t({ context: "email heading", message: "Reply", comment: "heading: an email reply the model asks to send" })
            }
            body={text(args.body)}
          />
        </>
      );
    case "gmail_trash": {
      const id = text(args.message_id);
      return (
        <p className="small">
          <Trans>Move message {id} to the trash</Trans>
        </p>
      );
    }
    case "gmail_modify_labels": {
      const id = text(args.message_id);
      const adding = list(args.add).length > 0;
      const removing = list(args.remove).length > 0;
      const add = list(args.add).map(text).join(", ");
      const remove = list(args.remove).map(text).join(", ");
      return (
        <p className="small">
          {adding && removing
            ? t({ message: `Message ${id}: add ${add}; remove ${remove}`, comment: "labels the model asks to add to and remove from an email" })
            : adding
              ? t({ message: `Message ${id}: add ${add}`, comment: "labels the model asks to add to an email" })
              : removing
                ? t({ message: `Message ${id}; remove ${remove}`, comment: "labels the model asks to remove from an email" })
                : t({ message: `Message ${id}`, comment: "an email the model asks to change the labels of" })}
        </p>
      );
    }
    case "calendar_create_event":
    case "calendar_update_event": {
      const id = text(args.event_id);
      // Google emails the guests (an invitation, or the change) unless told not to; a change
      // reaches the event's guests even when it names none.
      const told = args.notify_attendees !== false && (tool === "calendar_update_event" || list(args.attendees).length > 0);
      return (
        <EventChange
          heading={tool === "calendar_create_event" ? t`New event` : t`Change event ${id}`}
          event={args}
          guestsTold={told}
        />
      );
    }
    case "calendar_delete_event": {
      const id = text(args.event_id);
      return (
        <p className="small">
          <Trans>Delete event {id}</Trans>
        </p>
      );
    }
    case "calendar_quick_add": {
      const said = text(args.text);
      return (
        <p className="small">
          <Trans comment="an event described in words, added as the calendar understands it">
            Add to the calendar: <q>{said}</q>
          </Trans>
        </p>
      );
    }
    default:
      return null;
  }
}

/** An event as the model asks to create or change it, and whether its guests get an email. */
function EventChange({ heading, event, guestsTold }: { heading: string; event: Fields; guestsTold: boolean }) {
  const { t } = useLingui();
  const start = text(event.start);
  const end = text(event.end);
  const attendees = list(event.attendees).map(text);
  const minutes = typeof event.duration_minutes === "number" ? formatNumber(event.duration_minutes) : text(event.duration_minutes);
  const span = end ? `${start} – ${end}` : event.duration_minutes ? t`${start} (${minutes} min)` : start;
  const when = event.all_day === true ? t({ message: `${span} (all day)`, comment: "an event's time, lasting the whole day" }) : span;
  return (
    <div className="small">
      <strong>{heading}</strong>
      <dl className="facts">
        {text(event.title) && (
          <>
            <dt>
              <Trans comment="an event's title">Title</Trans>
            </dt>
            <dd>{text(event.title)}</dd>
          </>
        )}
        {start && (
          <>
            <dt>
              <Trans comment="an event's time">When</Trans>
            </dt>
            <dd>{when}</dd>
          </>
        )}
        {text(event.location) && (
          <>
            <dt>
              <Trans comment="an event's place">Where</Trans>
            </dt>
            <dd>{text(event.location)}</dd>
          </>
        )}
        {attendees.length > 0 && (
          <>
            <dt>
              <Trans comment="the people invited to an event">Guests</Trans>
            </dt>
            <dd>{attendees.join(", ")}</dd>
          </>
        )}
      </dl>
      {guestsTold && (
        <p>
          <Trans comment="under an event the model asks to create or change: Google emails its guests">
            The guests get an email about it.
          </Trans>
        </p>
      )}
    </div>
  );
}

function Letter({
  heading,
  to = [],
  cc = [],
  bcc = [],
  subject,
  body,
}: {
  heading: string;
  to?: unknown[];
  cc?: unknown[];
  bcc?: unknown[];
  subject?: string;
  body: string;
}) {
  const { t } = useLingui();
  const clipped = body.length > BODY_PREVIEW ? `${body.slice(0, BODY_PREVIEW)}…` : body;
  return (
    <div className="small letter">
      <strong>{heading}</strong>
      <dl className="facts">
        {to.length > 0 && (
          <>
            <dt>
              <Trans comment="an email's recipients">To</Trans>
            </dt>
            <dd>{to.map(text).join(", ")}</dd>
          </>
        )}
        {cc.length > 0 && (
          <>
            <dt>
              <Trans comment="an email's copy recipients (carbon copy)">Cc</Trans>
            </dt>
            <dd>{cc.map(text).join(", ")}</dd>
          </>
        )}
        {bcc.length > 0 && (
          <>
            <dt>
              <Trans comment="an email's hidden copy recipients (blind carbon copy)">Bcc</Trans>
            </dt>
            <dd>{bcc.map(text).join(", ")}</dd>
          </>
        )}
        {subject !== undefined && (
          <>
            <dt>
              <Trans comment="an email's subject">Subject</Trans>
            </dt>
            <dd>{subject || t`(no subject)`}</dd>
          </>
        )}
      </dl>
      <pre className="letter-body">{clipped}</pre>
    </div>
  );
}

/** A result's messages, message, events or busy times. */
function Found({ result }: { result: Fields }) {
  const { t } = useLingui();
  const messages = list(result.messages).map(fields);
  const events = list(result.events).map(fields);
  if (messages.length > 0) {
    const more = formatNumber(messages.length - SHOWN);
    return (
      <ul className="google-list" aria-label={t({ message: "Messages", comment: "emails found" })}>
        {messages.slice(0, SHOWN).map((m, i) => (
          <li key={text(m.id) || i}>
            <strong>{text(m.from)}</strong> — {text(m.subject) || t`(no subject)`}{" "}
            <span className="muted">{text(m.date)}</span>
            {m.unread === true && (
              <span className="muted">
                {" "}
                · <Trans comment="an email not read yet">unread</Trans>
              </span>
            )}
          </li>
        ))}
        {messages.length > SHOWN && (
          <li className="muted">
            <Trans comment="more emails than the list shows">and {more} more</Trans>
          </li>
        )}
      </ul>
    );
  }
  if (events.length > 0) {
    const more = formatNumber(events.length - SHOWN);
    return (
      <ul className="google-list" aria-label={t({ message: "Events", comment: "calendar events found" })}>
        {events.slice(0, SHOWN).map((e, i) => (
          <EventRow key={text(e.id) || i} event={e} />
        ))}
        {events.length > SHOWN && (
          <li className="muted">
            <Trans comment="more events than the list shows">and {more} more</Trans>
          </li>
        )}
      </ul>
    );
  }
  // A message sent or saved: who it went to (a reply's recipients came from the original).
  if (Array.isArray(result.to)) {
    const everyone = [...list(result.to), ...list(result.cc), ...list(result.bcc)].map(text).filter(Boolean).join(", ");
    return (
      <p className="small" aria-label={t({ message: "Recipients", comment: "the people an email went to" })}>
        {result.draftId
          ? everyone
            ? t`Draft for ${everyone}`
            : t`Draft for no one`
          : everyone
            ? t`Sent to ${everyone}`
            : t`Sent to no one`}
      </p>
    );
  }
  if (text(result.title) || text(result.when)) {
    return (
      <ul className="google-list" aria-label={t({ message: "Event", comment: "a calendar event" })}>
        <EventRow event={result} />
      </ul>
    );
  }
  if (text(result.from) || text(result.subject)) {
    const attachments = list(result.attachments).map(fields);
    const attachmentCount = attachments.length;
    return (
      <p className="small" aria-label={t({ message: "Message", comment: "an email" })}>
        <strong>{text(result.from)}</strong> — {text(result.subject) || t`(no subject)`}{" "}
        <span className="muted">{text(result.date)}</span>
        {attachments.length > 0 && (
          <span className="muted">
            {" "}
            · {t`${plural(attachmentCount, { one: "# attachment", other: "# attachments" })}`}
          </span>
        )}
      </p>
    );
  }
  const busy = list(result.busy).map(fields);
  if (Array.isArray(result.busy)) {
    const times = busy.map((b) => `${text(b.start)} – ${text(b.end)}`).join("; ");
    return (
      <p className="small" aria-label={t`Busy times`}>
        {busy.length === 0 ? t`Free the whole time.` : t`Busy: ${times}`}
      </p>
    );
  }
  return null;
}

function EventRow({ event }: { event: Fields }) {
  const { t } = useLingui();
  const attendees = list(event.attendees)
    .map(fields)
    .map((a) => text(a.name) || text(a.email))
    .filter(Boolean)
    .join(", ");
  return (
    <li>
      <strong>{text(event.title) || t`(no title)`}</strong> <span className="muted">{text(event.when)}</span>
      {text(event.location) && <span className="muted"> · {text(event.location)}</span>}
      {attendees && (
        <span className="muted">
          {" "}
          · <Trans comment="the people invited to an event">with {attendees}</Trans>
        </span>
      )}
    </li>
  );
}
