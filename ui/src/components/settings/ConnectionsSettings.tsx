import { useEffect, useRef, useState, type ChangeEvent } from "react";
import type { GoogleService, GoogleStatus } from "../../bindings";
import { call, commands, errorMessage } from "../../ipc";
import { useAction } from "../../lib/useAction";
import { useLoad } from "../../lib/useLoad";

/** What a new connection offers ticked: reading, which asks before nothing changes. */
const FIRST_CHOICE: GoogleService[] = ["mail_read", "calendar_read"];

/** Settings -> Connections: accounts Perch acts in through its own tools (Google). */
export function ConnectionsSettings() {
  return <GoogleCard />;
}

function GoogleCard() {
  const loaded = useLoad<GoogleStatus>(() => call(commands.googleStatus()), "google");
  const { reload } = loaded;
  const status = loaded.value;
  const { error, act } = useAction(reload);
  const [connecting, setConnecting] = useState(false);
  const [editingClient, setEditingClient] = useState(false);
  const [chosen, setChosen] = useState<GoogleService[] | null>(null);

  // While Google's page is open, its address is looked up until it is known (for a browser
  // that did not open).
  useEffect(() => {
    if (!connecting) return;
    const timer = setInterval(reload, 1000);
    return () => clearInterval(timer);
  }, [connecting, reload]);

  if (!status) return loaded.error ? <p role="alert">{errorMessage(loaded.error)}</p> : null;
  const granted = status.services.filter((s) => s.granted).map((s) => s.service);
  const selected = chosen ?? (status.connected ? granted : FIRST_CHOICE);
  // What Connect asks for: the ticked services not granted yet (Google adds them to the rest).
  const wanted = selected.filter((s) => !granted.includes(s));
  const toggle = (service: GoogleService, on: boolean) =>
    setChosen(on ? [...selected, service] : selected.filter((s) => s !== service));
  const connect = async () => {
    setConnecting(true);
    await act(call(commands.googleConnect(status.connected ? wanted : selected)));
    setConnecting(false);
    setChosen(null);
  };
  const showClientForm = !status.client_id || editingClient;

  return (
    <fieldset className="card connection" aria-label="Google">
      <legend>Google mail and calendar</legend>
      {error && (
        <p className="error small" role="alert">
          {error}
        </p>
      )}
      {status.connected ? (
        <p className="small" role="status">
          Connected as <strong>{status.account ?? "your Google account"}</strong>
          {granted.length > 0 &&
            `: ${status.services
              .filter((s) => s.granted)
              .map((s) => s.label.toLowerCase())
              .join(", ")}`}
          .
        </p>
      ) : (
        <p className="small muted">
          Lets the model search and read your mail, write drafts and send with your approval, and see and change your
          calendar. Perch talks to Google from this computer only.
        </p>
      )}
      {status.problem && (
        <p className="warning-note" role="status">
          {status.problem}
        </p>
      )}
      {showClientForm ? (
        <ClientForm
          current={status.client_id}
          onSaved={() => {
            setEditingClient(false);
            reload();
          }}
          onCancel={status.client_id ? () => setEditingClient(false) : undefined}
        />
      ) : (
        <>
          <fieldset className="choices" aria-label="What Perch may do">
            <legend className="subhead">What Perch may do</legend>
            {status.services.map((s) => (
              <label key={s.service} className="choice">
                {/* Google keeps what it granted (incremental authorization): taking one back is
                    Disconnect, then connecting with less. */}
                <input
                  type="checkbox"
                  checked={s.granted || selected.includes(s.service)}
                  disabled={connecting || s.granted}
                  onChange={(e) => toggle(s.service, e.target.checked)}
                />
                <span>
                  <strong>{s.label}</strong>
                  {s.granted && <span className="muted"> (allowed)</span>}
                  <br />
                  <span className="muted small">{s.description}</span>
                </span>
              </label>
            ))}
          </fieldset>
          {connecting ? (
            <Connecting page={status.connecting_page} onCancel={() => void act(call(commands.googleCancelConnect()))} />
          ) : (
            <div className="buttons">
              <button
                type="button"
                className="primary"
                disabled={status.connected ? wanted.length === 0 : selected.length === 0}
                onClick={() => void connect()}
              >
                {status.connected ? "Update access" : "Connect Google"}
              </button>
              {status.connected && (
                <button type="button" onClick={() => void act(call(commands.googleDisconnect(false)))}>
                  Disconnect
                </button>
              )}
              <button type="button" className="link-button" onClick={() => setEditingClient(true)}>
                Change client
              </button>
            </div>
          )}
          <p className="small muted">
            Client <code>{status.client_id}</code>. Sending, replying, trashing and deleting events ask you every time.
            {granted.length > 0 && " To take a permission back, disconnect and connect again with less."}
          </p>
        </>
      )}
    </fieldset>
  );
}

/** The browser step under way: where to finish, the address to open by hand, and Cancel. */
function Connecting({ page, onCancel }: { page: string | null; onCancel: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="sign-in" role="status" aria-label="Connecting to Google">
      <p className="small">
        {page
          ? "Finish in your browser: choose your account and allow what you ticked. If no page opened, open this address:"
          : "Opening your browser…"}
      </p>
      {page && (
        <p className="small path" title={page}>
          <code>{page}</code>
        </p>
      )}
      {page && (
        <p className="small muted">
          If Google shows an error such as invalid_client or redirect_uri_mismatch, the client ID is wrong or the client is
          not a Desktop app: Cancel, then Change client.
        </p>
      )}
      <div className="buttons">
        {page && (
          <button type="button" onClick={() => void navigator.clipboard?.writeText(page).then(() => setCopied(true))}>
            {copied ? "Copied" : "Copy address"}
          </button>
        )}
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}

/** The user's own OAuth client: the short guide, then its client_secret.json or its ID and secret. */
function ClientForm({
  current,
  onSaved,
  onCancel,
}: {
  current: string | null;
  onSaved: () => void;
  onCancel?: () => void;
}) {
  const [id, setId] = useState(current ?? "");
  const [secret, setSecret] = useState("");
  const [error, setError] = useState<string | null>(null);
  const file = useRef<HTMLInputElement>(null);
  const save = async (pending: Promise<unknown>) => {
    try {
      await pending;
      setError(null);
      onSaved();
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const load = async (e: ChangeEvent<HTMLInputElement>) => {
    const picked = e.target.files?.[0];
    e.target.value = "";
    if (!picked) return;
    if (picked.size > 64 * 1024) {
      setError("That file is far larger than a client_secret.json; choose the one Google gave for your client.");
      return;
    }
    await save(call(commands.googleSetClient(null, null, await picked.text())));
  };
  return (
    <div className="client-form">
      <p className="small">Perch connects through your own Google OAuth client, made once:</p>
      <ol className="small steps">
        <li>In Google Cloud Console, create a project (or pick one).</li>
        <li>Under APIs &amp; Services → Library, enable the Gmail API and the Google Calendar API.</li>
        <li>Under OAuth consent screen, choose External and add your address as a test user.</li>
        <li>
          Under Credentials → Create credentials → OAuth client ID, choose <strong>Desktop app</strong>.
        </li>
        <li>Download its JSON and load it here, or paste its client ID and secret.</li>
      </ol>
      <div className="buttons">
        <button type="button" className="primary" onClick={() => file.current?.click()}>
          Load client_secret.json…
        </button>
        <input ref={file} type="file" accept=".json,application/json" hidden onChange={(e) => void load(e)} />
      </div>
      <label className="field">
        Client ID
        <input value={id} onChange={(e) => setId(e.target.value)} placeholder="….apps.googleusercontent.com" spellCheck={false} />
      </label>
      <label className="field">
        Client secret
        <input type="password" value={secret} onChange={(e) => setSecret(e.target.value)} autoComplete="off" spellCheck={false} />
      </label>
      {error && (
        <p className="error small" role="alert">
          {error}
        </p>
      )}
      <div className="buttons">
        <button type="button" disabled={!id.trim()} onClick={() => void save(call(commands.googleSetClient(id, secret || null, null)))}>
          Save client
        </button>
        {onCancel && (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </div>
  );
}
