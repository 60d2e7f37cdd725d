import { useEffect, useRef, useState, type ChangeEvent } from "react";
import type { MessageDescriptor } from "@lingui/core";
import { msg } from "@lingui/core/macro";
import { Trans, useLingui } from "@lingui/react/macro";
import type { GoogleService, GoogleStatus } from "../../bindings";
import { call, commands, errorMessage } from "../../ipc";
import { useAction } from "../../lib/useAction";
import { useLoad } from "../../lib/useLoad";
import { formatList } from "../../lib/format";

/** The services in the UI's words (the engine's own, for the command line, are English). */
const SERVICE_WORDS: Record<GoogleService, { label: MessageDescriptor; lower: MessageDescriptor; description: MessageDescriptor }> = {
  mail_read: {
    label: msg`Read mail`,
    lower: msg({ message: "read mail", comment: "in a list: Connected as x: read mail, see calendar" }),
    description: msg`Search and read your mail and its labels; see attachments' names and sizes.`,
  },
  mail_send: {
    label: msg`Write mail`,
    lower: msg({ message: "write mail", comment: "in a list: Connected as x: read mail, write mail" }),
    description: msg`Write drafts and send mail as you (with Read mail, reply too). Perch asks you before every message is sent.`,
  },
  mail_organize: {
    label: msg`Organise mail`,
    lower: msg({ message: "organise mail", comment: "in a list: Connected as x: read mail, organise mail" }),
    description: msg`Add and remove labels, and move mail to the trash (never deleted for good). Trashing always asks you first.`,
  },
  calendar_read: {
    label: msg`See calendar`,
    lower: msg({ message: "see calendar", comment: "in a list: Connected as x: read mail, see calendar" }),
    description: msg`See your events and when you are free or busy.`,
  },
  calendar_write: {
    label: msg`Change calendar`,
    lower: msg({ message: "change calendar", comment: "in a list: Connected as x: see calendar, change calendar" }),
    description: msg`Create, change and delete events. Deleting always asks you first; the others ask unless you allow them.`,
  },
};

/** What a new connection offers ticked: reading, which asks before nothing changes. */
const FIRST_CHOICE: GoogleService[] = ["mail_read", "calendar_read"];

/** Settings -> Connections: accounts Perch acts in through its own tools (Google). */
export function ConnectionsSettings() {
  return <GoogleCard />;
}

function GoogleCard() {
  const { t } = useLingui();
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
  const account = status.account ?? t`your Google account`;
  const services = formatList(status.services.filter((s) => s.granted).map((s) => t(SERVICE_WORDS[s.service].lower)));
  const clientId = status.client_id;

  return (
    // eslint-disable-next-line lingui/no-unlocalized-strings -- the provider's name
    <fieldset className="card connection" aria-label="Google">
      <legend>
        <Trans>Google mail and calendar</Trans>
      </legend>
      {error && (
        <p className="error small" role="alert">
          {error}
        </p>
      )}
      {status.connected ? (
        <p className="small" role="status">
          {granted.length > 0 ? (
            <Trans>
              Connected as <strong>{account}</strong>: {services}.
            </Trans>
          ) : (
            <Trans>
              Connected as <strong>{account}</strong>.
            </Trans>
          )}
        </p>
      ) : (
        <p className="small muted">
          <Trans>
            Lets the model search and read your mail, write drafts and send with your approval, and see and change your
            calendar. Perch talks to Google from this computer only.
          </Trans>
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
          <fieldset className="choices" aria-label={t`What Perch may do`}>
            <legend className="subhead">
              <Trans>What Perch may do</Trans>
            </legend>
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
                  <strong>{t(SERVICE_WORDS[s.service].label)}</strong>
                  {s.granted && (
                    <span className="muted">
                      {" "}
                      <Trans comment="a Google service the account already allows Perch">(allowed)</Trans>
                    </span>
                  )}
                  <br />
                  <span className="muted small">{t(SERVICE_WORDS[s.service].description)}</span>
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
                {status.connected ? t`Update access` : t`Connect Google`}
              </button>
              {status.connected && (
                <button type="button" onClick={() => void act(call(commands.googleDisconnect(false)))}>
                  <Trans>Disconnect</Trans>
                </button>
              )}
              <button type="button" className="link-button" onClick={() => setEditingClient(true)}>
                <Trans>Change client</Trans>
              </button>
            </div>
          )}
          <p className="small muted">
            <Trans>
              Client <code>{clientId}</code>. Sending, replying, trashing and deleting events ask you every time.
            </Trans>
            {granted.length > 0 && (
              <>
                {" "}
                <Trans>To take a permission back, disconnect and connect again with less.</Trans>
              </>
            )}
          </p>
        </>
      )}
    </fieldset>
  );
}

/** The browser step under way: where to finish, the address to open by hand, and Cancel. */
function Connecting({ page, onCancel }: { page: string | null; onCancel: () => void }) {
  const { t } = useLingui();
  const [copied, setCopied] = useState(false);
  return (
    <div className="sign-in" role="status" aria-label={t`Connecting to Google`}>
      <p className="small">
        {page
          ? t`Finish in your browser: choose your account and allow what you ticked. If no page opened, open this address:`
          : t`Opening your browser…`}
      </p>
      {page && (
        <p className="small path" title={page}>
          <code>{page}</code>
        </p>
      )}
      {page && (
        <p className="small muted">
          <Trans>
            If Google shows an error such as invalid_client or redirect_uri_mismatch, the client ID is wrong or the client
            is not a Desktop app: Cancel, then Change client.
          </Trans>
        </p>
      )}
      <div className="buttons">
        {page && (
          <button type="button" onClick={() => void navigator.clipboard?.writeText(page).then(() => setCopied(true))}>
            {copied ? t`Copied` : t`Copy address`}
          </button>
        )}
        <button type="button" onClick={onCancel}>
          <Trans>Cancel</Trans>
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
  const { t } = useLingui();
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
      setError(t`That file is far larger than a client_secret.json; choose the one Google gave for your client.`);
      return;
    }
    await save(call(commands.googleSetClient(null, null, await picked.text())));
  };
  return (
    <div className="client-form">
      <p className="small">
        <Trans>Perch connects through your own Google OAuth client, made once:</Trans>
      </p>
      <ol className="small steps">
        <li>
          <Trans>In Google Cloud Console, create a project (or pick one).</Trans>
        </li>
        <li>
          <Trans>Under APIs &amp; Services → Library, enable the Gmail API and the Google Calendar API.</Trans>
        </li>
        <li>
          <Trans>Under OAuth consent screen, choose External and add your address as a test user.</Trans>
        </li>
        <li>
          <Trans>
            Under Credentials → Create credentials → OAuth client ID, choose <strong>Desktop app</strong>.
          </Trans>
        </li>
        <li>
          <Trans>Download its JSON and load it here, or paste its client ID and secret.</Trans>
        </li>
      </ol>
      <div className="buttons">
        <button type="button" className="primary" onClick={() => file.current?.click()}>
          <Trans>Load client_secret.json…</Trans>
        </button>
        <input ref={file} type="file" accept=".json,application/json" hidden onChange={(e) => void load(e)} />
      </div>
      <label className="field">
        <Trans>Client ID</Trans>
        <input value={id} onChange={(e) => setId(e.target.value)} placeholder="….apps.googleusercontent.com" spellCheck={false} />
      </label>
      <label className="field">
        <Trans>Client secret</Trans>
        <input type="password" value={secret} onChange={(e) => setSecret(e.target.value)} autoComplete="off" spellCheck={false} />
      </label>
      {error && (
        <p className="error small" role="alert">
          {error}
        </p>
      )}
      <div className="buttons">
        <button type="button" disabled={!id.trim()} onClick={() => void save(call(commands.googleSetClient(id, secret || null, null)))}>
          <Trans>Save client</Trans>
        </button>
        {onCancel && (
          <button type="button" onClick={onCancel}>
            <Trans>Cancel</Trans>
          </button>
        )}
      </div>
    </div>
  );
}
