// A tool's own interface (MCP Apps) inside its card: a sandboxed frame with an opaque origin,
// its page served once by the `perch-app:` scheme with the policy its server declared, and
// the host side of the app's bridge (lib/mcpApps/bridge.ts). What the app asks that reaches
// the user (a link to open, a message to put in the box) is asked about here, in the card;
// its tool calls are asked about by the engine on the same card, like the model's.
import { useEffect, useLayoutEffect, useRef, useState } from "react";
import { Trans, useLingui } from "@lingui/react/macro";
import type { OpenedApp, ToolCallRecord, Value } from "../../bindings";
import { call as invoke, commands, errorMessage, events } from "../../ipc";
import { announce } from "../../lib/announce";
import { AppSession, BridgeRouter, type HostHandlers, type StopReason } from "../../lib/mcpApps/bridge";
import { PUT_IN_COMPOSER } from "../../lib/shortcuts";

/** One listener for every frame in the page. */
const router = new BridgeRouter();
/** The most apps running at once; a card beyond it offers "Show app". */
const MAX_LIVE = 4;
let live = 0;
/** Cards waiting for a place, told when one is given back (an app closed or failed). */
const waitingCards = new Set<() => void>();

type Stopped = StopReason | "memory" | "turned_off" | "failed";

type Consent =
  | { kind: "link"; url: string; settle: (opened: boolean) => void }
  | { kind: "message"; text: string; settle: (placed: boolean) => void };

/** A request to the engine for this session; its JSON-RPC error is thrown as is. */
async function request(session: string, method: string, params: Record<string, unknown>): Promise<unknown> {
  const reply = await invoke(commands.mcpAppRequest(session, method, params as Value));
  if ("Err" in reply && reply.Err) throw reply.Err;
  return reply.Ok;
}

function isWebLink(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === "https:" || u.protocol === "http:" || u.protocol === "mailto:";
  } catch {
    return false;
  }
}

/** The host context an app is told about: Perch's look, language and the frame's room. */
function hostContext(app: OpenedApp["app"], callId: string, width: number, large: boolean) {
  const theme = document.documentElement.dataset.theme ?? (window.matchMedia?.("(prefers-color-scheme: dark)").matches ? "dark" : "light");
  const style = getComputedStyle(document.documentElement);
  const variable = (name: string) => style.getPropertyValue(name).trim();
  return {
    toolInfo: { id: callId, tool: app.tool },
    theme,
    styles: {
      variables: {
        "--color-background-primary": variable("--surface"),
        "--color-background-secondary": variable("--surface-2"),
        "--color-text-primary": variable("--text"),
        "--color-text-secondary": variable("--muted"),
        "--color-border-primary": variable("--border"),
        "--font-sans": style.fontFamily,
      },
    },
    displayMode: large ? "fullscreen" : "inline",
    availableDisplayModes: ["inline", "fullscreen"],
    containerDimensions: { width, maxHeight: large ? window.innerHeight : 600 },
    locale: document.documentElement.lang || navigator.language,
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    // eslint-disable-next-line lingui/no-unlocalized-strings -- a product name, not a sentence
    userAgent: "Perch",
    platform: "desktop",
    deviceCapabilities: { touch: false, hover: true },
  };
}

/** Mounts the app once the card asks; the text result stays reachable beside it. `asking`: the
 * card has a question open (the app's own tool call), which the large view must not cover.
 * `onToolCalled`: one of the app's tool calls ended (allowed or not), so the card's record of
 * them is read again. `onModelContext`: what the app now has the model told (null: nothing). */
export function AppFrame({
  call,
  asking,
  onShowText,
  onToolCalled,
  onModelContext,
}: {
  call: ToolCallRecord;
  asking: boolean;
  onShowText: () => void;
  onToolCalled?: () => void;
  onModelContext?: (text: string | null) => void;
}) {
  const { t } = useLingui();
  const [opened, setOpened] = useState<OpenedApp | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [stopped, setStopped] = useState<Stopped | null>(null);
  // Beyond MAX_LIVE running apps a card waits for "Show app"; the user's click is not limited.
  const [waiting, setWaiting] = useState(false);
  const [chosen, setChosen] = useState(false);
  const [height, setHeight] = useState(120);
  const [large, setLarge] = useState(false);
  const [consent, setConsent] = useState<Consent | null>(null);
  const frame = useRef<HTMLIFrameElement>(null);
  const session = useRef<AppSession | null>(null);
  const container = useRef<HTMLDivElement>(null);
  // A question on the card (the app's own call) is never hidden under the large view.
  const shownLarge = large && !asking;
  const largeNow = useRef(false);
  useEffect(() => {
    largeNow.current = shownLarge;
  }, [shownLarge]);
  // Read when a call ends, so the bridge's handlers need not be made again for a new callback.
  const toolCalled = useRef(onToolCalled);
  const modelContext = useRef(onModelContext);
  useEffect(() => {
    toolCalled.current = onToolCalled;
    modelContext.current = onModelContext;
  }, [onToolCalled, onModelContext]);

  // Open: the engine checks the page and mints its one-time address. The slot is claimed here,
  // not while rendering, so cards drawn in one pass (a conversation opened) count one another.
  const slot = useRef(false);
  const release = () => {
    if (!slot.current) return;
    slot.current = false;
    live -= 1;
    waitingCards.forEach((tell) => tell());
  };
  // Waiting for a place: taken as soon as one is given back.
  useEffect(() => {
    if (!waiting) return;
    const tell = () => {
      if (live < MAX_LIVE) setWaiting(false);
    };
    waitingCards.add(tell);
    // A place may have been given back between deciding to wait and listening.
    queueMicrotask(tell);
    return () => {
      waitingCards.delete(tell);
    };
  }, [waiting]);
  useEffect(() => {
    if (waiting) return;
    if (!chosen && live >= MAX_LIVE) {
      // The count is shared by every card, outside React: the answer comes back as an update.
      queueMicrotask(() => setWaiting(true));
      return;
    }
    let cancelled = false;
    live += 1;
    slot.current = true;
    void invoke(commands.mcpAppOpen(call.id)).then(
      (reply) => {
        if (cancelled) {
          if (reply.Ok) void invoke(commands.mcpAppClose(reply.Ok.app.session)).catch(() => {});
          return;
        }
        if (reply.Ok) return setOpened(reply.Ok);
        // A card whose app could not open shows text, and no longer counts as running.
        release();
        setFailure(reply.Err?.message ?? "");
      },
      (e: unknown) => {
        if (cancelled) return;
        release();
        setFailure(errorMessage(e));
      },
    );
    return () => {
      cancelled = true;
      release();
    };
  }, [call.id, waiting, chosen]);

  // The bridge, once the frame exists: routed by the frame's window, answered through the engine.
  // A layout effect: routed in the same commit that adds the frame, before its page can load
  // and speak (the SDK sends `ui/initialize` once).
  useLayoutEffect(() => {
    const target = frame.current?.contentWindow;
    if (!opened || !target) return;
    const { app } = opened;
    const id = app.session;
    const stop = (reason: Stopped) => {
      session.current?.stop("closed");
      setStopped(reason);
      release();
      void invoke(commands.mcpAppClose(id)).catch(() => {});
    };
    // One consent question at a time: another while one waits is refused, so an app cannot
    // change the link under the user's click.
    const consentOnce = (next: (settle: (yes: boolean) => void) => Consent) =>
      new Promise<boolean>((settle) =>
        setConsent((current) => {
          if (current) {
            settle(false);
            return current;
          }
          return next(settle);
        }),
      );
    const handlers: HostHandlers = {
      callTool: (name, args) => request(id, "tools/call", { name, arguments: args }).finally(() => toolCalled.current?.()),
      listTools: () => request(id, "tools/list", {}),
      readResource: (uri) => request(id, "resources/read", { uri }),
      listResources: () => request(id, "resources/list", {}),
      openLink: (url) => (isWebLink(url) ? consentOnce((settle) => ({ kind: "link", url, settle })) : Promise.resolve(false)),
      message: (text) => consentOnce((settle) => ({ kind: "message", text, settle })),
      // Kept by the engine on the card, shown there, and given to the model from the next turn.
      updateModelContext: (context) =>
        request(id, "ui/update-model-context", context).then((told) => {
          modelContext.current?.((told as { model_context: string | null } | undefined)?.model_context ?? null);
        }),
      log: (level, data, logger) => void request(id, "notifications/message", { level, data, logger }).catch(() => {}),
      sizeChanged: ({ height }) => setHeight(height),
      // Only the user makes an app large (it would cover Perch, approvals included); an app may
      // only go back to its place.
      requestDisplayMode: (mode) => {
        if (mode === "inline") setLarge(false);
        return largeNow.current ? "fullscreen" : "inline";
      },
      requestTeardown: () => void session.current?.teardown().finally(() => stop("closed")),
      stopped: (reason) => stop(reason),
    };
    const width = container.current?.clientWidth ?? 400;
    const s = new AppSession({
      post: (message) => target.postMessage(message, "*"),
      handlers,
      hostInfo: { name: "Perch", version: opened.host_version },
      hostCapabilities: {
        openLinks: {},
        serverTools: { listChanged: false },
        serverResources: { listChanged: false },
        logging: {},
        message: { text: {} },
        updateModelContext: { text: {}, structuredContent: {} },
        sandbox: { permissions: {}, csp: { connectDomains: app.connect_domains, resourceDomains: app.resource_domains } },
      },
      hostContext: hostContext(app, call.id, width, false),
      toolInput: (app.tool_input ?? {}) as Record<string, unknown>,
      toolResult: app.tool_result ?? undefined,
    });
    session.current = s;
    const unregister = router.register(target, s);
    const unlisten = events.mcpAppStopped.listen((e) => {
      if (e.payload.session === id) stop(e.payload.reason);
    });
    return () => {
      void unlisten.then((f) => f());
      // Told before it goes (it may answer while its frame still exists), then unrouted.
      void s.teardown().finally(() => {
        unregister();
        void invoke(commands.mcpAppClose(id)).catch(() => {});
      });
      session.current = null;
    };
  }, [opened, call.id]);

  // Stopped by Perch (not closed by the user): said to screen readers as well.
  useEffect(() => {
    if (stopped && stopped !== "closed") announce(t`The app was stopped.`);
  }, [stopped, t]);

  // Large or not, the app hears of its new room.
  useEffect(() => {
    if (!opened || !session.current) return;
    const width = container.current?.clientWidth ?? 400;
    session.current.setHostContext(hostContext(opened.app, call.id, width, shownLarge));
  }, [shownLarge, opened, call.id]);

  // Esc leaves the large view.
  useEffect(() => {
    if (!large) return;
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && setLarge(false);
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [large]);

  const settle = (answer: boolean) => {
    if (!consent) return;
    if (answer && consent.kind === "link") void invoke(commands.openUrl(consent.url)).catch(() => {});
    if (answer && consent.kind === "message") window.dispatchEvent(new CustomEvent(PUT_IN_COMPOSER, { detail: consent.text }));
    consent.settle(answer);
    setConsent(null);
  };

  const name = opened?.app.app_name ?? call.tool;
  const server = call.server;
  const link = consent?.kind === "link" ? consent.url : null;
  if (waiting) {
    return (
      <div className="app-frame placeholder">
        <button
          type="button"
          onClick={() => {
            setChosen(true);
            setWaiting(false);
          }}
        >
          <Trans>Show app</Trans>
        </button>
      </div>
    );
  }
  if (failure || stopped) {
    const why =
      stopped === "flood"
        ? t`The app was stopped: it sent too many messages.`
        : stopped === "malformed"
          ? t`The app was stopped: it kept sending messages Perch does not understand.`
          : stopped === "memory"
            ? t`The app was stopped: it used too much memory.`
            : stopped === "turned_off"
              ? t`Apps from ${server} were turned off.`
              : stopped === "closed"
                ? t`The app closed.`
                : failure
                  ? t`The app could not be shown: ${failure}.`
                  : t`The app could not be opened.`;
    return (
      <p className="app-frame note muted" role="status">
        {why} <Trans>The result is shown as text.</Trans>
      </p>
    );
  }
  const refused = (opened?.app.refused_domains ?? []).map((r) => r.entry).join(", ");
  const reaches = (opened?.app.connect_domains ?? []).join(", ");
  return (
    <div ref={container} className={`app-frame${shownLarge ? " large" : ""}${opened?.app.prefers_border === false ? " borderless" : ""}`}>
      <div className="app-bar">
        <span className="muted">{t`App: ${name}`}</span>
        <button type="button" className="link" onClick={() => setLarge(!shownLarge)}>
          {shownLarge ? t`Back to the chat` : t`Open large`}
        </button>
        <button type="button" className="link" onClick={onShowText}>
          <Trans>Show as text</Trans>
        </button>
      </div>
      {opened && (
        <iframe
          ref={frame}
          src={opened.url}
          title={t`${name}, an app from ${server}`}
          sandbox="allow-scripts allow-forms"
          allow=""
          referrerPolicy="no-referrer"
          style={shownLarge ? undefined : { height }}
        />
      )}
      {!opened && <p className="muted">{t`Opening the app…`}</p>}
      {reaches && <p className="muted small-note">{t`It may connect to ${reaches}.`}</p>}
      {refused && <p className="muted small-note">{t`It asked for ${refused}, which Perch does not allow.`}</p>}
      {consent?.kind === "link" && link && (
        <div className="approval" role="group" aria-label={t`The app wants to open a link`}>
          <p>
            <Trans>
              The <strong>{name}</strong> app wants to open <span className="app-url">{link}</span>
            </Trans>
          </p>
          <div className="buttons">
            <button type="button" className="primary" onClick={() => settle(true)}>
              <Trans context="app link">Open</Trans>
            </button>
            <button type="button" onClick={() => void navigator.clipboard?.writeText(link)}>
              <Trans>Copy link</Trans>
            </button>
            <button type="button" onClick={() => settle(false)}>
              <Trans>Don't open</Trans>
            </button>
          </div>
        </div>
      )}
      {consent?.kind === "message" && (
        <div className="approval" role="group" aria-label={t`The app suggests a message`}>
          <p>
            <Trans>
              The <strong>{name}</strong> app suggests a message:
            </Trans>
          </p>
          <blockquote className="app-message">{consent.text}</blockquote>
          <div className="buttons">
            <button type="button" className="primary" onClick={() => settle(true)}>
              <Trans>Put in message box</Trans>
            </button>
            <button type="button" onClick={() => settle(false)}>
              <Trans>Dismiss</Trans>
            </button>
          </div>
        </div>
      )}
    </div>
  );
}
