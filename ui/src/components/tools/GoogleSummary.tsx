import type { ToolCallRecord } from "../../bindings";

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
  switch (tool) {
    case "gmail_search":
      return <p className="small">Search mail for <q>{text(args.query)}</q></p>;
    case "gmail_send":
    case "gmail_create_draft":
      return (
        <Letter
          heading={tool === "gmail_send" ? "Send" : "Save a draft"}
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
            In the message's thread, to its sender (or the address it asks replies to go to)
            {args.reply_all ? ", copying everyone else it went to" : ""}.
          </p>
          <Letter heading={args.reply_all ? "Reply to all" : "Reply"} body={text(args.body)} />
        </>
      );
    case "gmail_trash":
      return <p className="small">Move message {text(args.message_id)} to the trash</p>;
    case "gmail_modify_labels":
      return (
        <p className="small">
          Message {text(args.message_id)}
          {list(args.add).length > 0 && `: add ${list(args.add).map(text).join(", ")}`}
          {list(args.remove).length > 0 && `; remove ${list(args.remove).map(text).join(", ")}`}
        </p>
      );
    case "calendar_create_event":
    case "calendar_update_event":
      return (
        <EventChange
          heading={tool === "calendar_create_event" ? "New event" : `Change event ${text(args.event_id)}`}
          event={tool === "calendar_update_event" ? fields(args.change) : args}
        />
      );
    case "calendar_delete_event":
      return <p className="small">Delete event {text(args.event_id)}</p>;
    case "calendar_quick_add":
      return <p className="small">Add to the calendar: <q>{text(args.text)}</q></p>;
    default:
      return null;
  }
}

/** An event as the model asks to create or change it. */
function EventChange({ heading, event }: { heading: string; event: Fields }) {
  const start = text(event.start);
  const end = text(event.end);
  const attendees = list(event.attendees).map(text);
  return (
    <div className="small">
      <strong>{heading}</strong>
      <dl className="facts">
        {text(event.title) && (
          <>
            <dt>Title</dt>
            <dd>{text(event.title)}</dd>
          </>
        )}
        {start && (
          <>
            <dt>When</dt>
            <dd>
              {start}
              {end ? ` – ${end}` : event.duration_minutes ? ` (${text(event.duration_minutes)} min)` : ""}
              {event.all_day === true ? " (all day)" : ""}
            </dd>
          </>
        )}
        {text(event.location) && (
          <>
            <dt>Where</dt>
            <dd>{text(event.location)}</dd>
          </>
        )}
        {attendees.length > 0 && (
          <>
            <dt>Guests</dt>
            <dd>{attendees.join(", ")}</dd>
          </>
        )}
      </dl>
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
  const clipped = body.length > BODY_PREVIEW ? `${body.slice(0, BODY_PREVIEW)}…` : body;
  return (
    <div className="small letter">
      <strong>{heading}</strong>
      <dl className="facts">
        {to.length > 0 && (
          <>
            <dt>To</dt>
            <dd>{to.map(text).join(", ")}</dd>
          </>
        )}
        {cc.length > 0 && (
          <>
            <dt>Cc</dt>
            <dd>{cc.map(text).join(", ")}</dd>
          </>
        )}
        {bcc.length > 0 && (
          <>
            <dt>Bcc</dt>
            <dd>{bcc.map(text).join(", ")}</dd>
          </>
        )}
        {subject !== undefined && (
          <>
            <dt>Subject</dt>
            <dd>{subject || "(no subject)"}</dd>
          </>
        )}
      </dl>
      <pre className="letter-body">{clipped}</pre>
    </div>
  );
}

/** A result's messages, message, events or busy times. */
function Found({ result }: { result: Fields }) {
  const messages = list(result.messages).map(fields);
  const events = list(result.events).map(fields);
  if (messages.length > 0) {
    return (
      <ul className="google-list" aria-label="Messages">
        {messages.slice(0, SHOWN).map((m, i) => (
          <li key={text(m.id) || i}>
            <strong>{text(m.from)}</strong> — {text(m.subject) || "(no subject)"}{" "}
            <span className="muted">{text(m.date)}</span>
            {m.unread === true && <span className="muted"> · unread</span>}
          </li>
        ))}
        {messages.length > SHOWN && <li className="muted">and {messages.length - SHOWN} more</li>}
      </ul>
    );
  }
  if (events.length > 0) {
    return (
      <ul className="google-list" aria-label="Events">
        {events.slice(0, SHOWN).map((e, i) => (
          <EventRow key={text(e.id) || i} event={e} />
        ))}
        {events.length > SHOWN && <li className="muted">and {events.length - SHOWN} more</li>}
      </ul>
    );
  }
  // A message sent or saved: who it went to (a reply's recipients came from the original).
  if (Array.isArray(result.to)) {
    const everyone = [...list(result.to), ...list(result.cc), ...list(result.bcc)].map(text).filter(Boolean);
    return (
      <p className="small" aria-label="Recipients">
        {result.draftId ? "Draft for " : "Sent to "}
        {everyone.join(", ") || "no one"}
      </p>
    );
  }
  if (text(result.title) || text(result.when)) {
    return (
      <ul className="google-list" aria-label="Event">
        <EventRow event={result} />
      </ul>
    );
  }
  if (text(result.from) || text(result.subject)) {
    const attachments = list(result.attachments).map(fields);
    return (
      <p className="small" aria-label="Message">
        <strong>{text(result.from)}</strong> — {text(result.subject) || "(no subject)"}{" "}
        <span className="muted">{text(result.date)}</span>
        {attachments.length > 0 && (
          <span className="muted"> · {attachments.length === 1 ? "1 attachment" : `${attachments.length} attachments`}</span>
        )}
      </p>
    );
  }
  const busy = list(result.busy).map(fields);
  if (Array.isArray(result.busy)) {
    return (
      <p className="small" aria-label="Busy times">
        {busy.length === 0 ? "Free the whole time." : `Busy: ${busy.map((b) => `${text(b.start)} – ${text(b.end)}`).join("; ")}`}
      </p>
    );
  }
  return null;
}

function EventRow({ event }: { event: Fields }) {
  const attendees = list(event.attendees)
    .map(fields)
    .map((a) => text(a.name) || text(a.email))
    .filter(Boolean);
  return (
    <li>
      <strong>{text(event.title) || "(no title)"}</strong> <span className="muted">{text(event.when)}</span>
      {text(event.location) && <span className="muted"> · {text(event.location)}</span>}
      {attendees.length > 0 && <span className="muted"> · with {attendees.join(", ")}</span>}
    </li>
  );
}
