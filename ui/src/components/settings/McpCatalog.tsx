// Settings -> MCP -> Add a server: a short list of well-known remote servers (from the engine's
// catalogue). Picking one only fills the Add form; nothing is saved until Add.
import { useEffect, useState } from "react";
import { t } from "@lingui/core/macro";
import { Trans, useLingui } from "@lingui/react/macro";
import type { CatalogEntry, Needs, ServerView } from "../../bindings";
import { commands } from "../../ipc";

/** An address as servers are compared: no trailing slash, scheme and host in lower case. */
function sameAddress(a: string, b: string): boolean {
  const norm = (s: string) => {
    try {
      const u = new URL(s.trim());
      return `${u.protocol}//${u.host.toLowerCase()}${u.pathname.replace(/\/+$/, "")}${u.search}`;
    } catch {
      return s.trim().replace(/\/+$/, "");
    }
  };
  return norm(a) === norm(b);
}

/** Whether one of the user's servers is this entry (same address). */
export function isConfigured(entry: CatalogEntry, servers: ServerView[]): boolean {
  return servers.some((s) => s.config.transport.type === "http" && sameAddress(s.config.transport.url, entry.url));
}

/** The entry's name, or the first free `name-2`, `name-3`... so picking never replaces a server. */
export function freeName(name: string, servers: ServerView[]): string {
  const taken = new Set(servers.map((s) => s.config.name));
  if (!taken.has(name)) return name;
  for (let i = 2; ; i++) if (!taken.has(`${name}-${i}`)) return `${name}-${i}`;
}

export function needsText(needs: Needs): string {
  switch (needs.kind) {
    case "nothing":
      return t`Needs nothing: it is public.`;
    case "sign_in":
      return t`Needs you to sign in (its card offers Sign in once added).`;
    case "token": {
      const { header, prefix } = needs;
      return t`Needs a token from the service, sent as ${header}: ${prefix}…`;
    }
  }
}

export function McpCatalog({ servers, onPick }: { servers: ServerView[]; onPick: (entry: CatalogEntry) => void }) {
  const { t } = useLingui();
  const [entries, setEntries] = useState<CatalogEntry[]>([]);
  // Closed again once one is picked, so the filled form is in view.
  const [open, setOpen] = useState(false);
  useEffect(() => {
    let live = true;
    // A static list; without it (an older shell) the form works as before.
    commands.mcpCatalog().then(
      (list) => live && setEntries(list),
      () => {},
    );
    return () => {
      live = false;
    };
  }, []);
  if (entries.length === 0) return null;
  return (
    <details className="catalog" open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>
        <Trans>Well-known servers</Trans>
      </summary>
      <ul className="catalog-list" aria-label={t`Well-known servers`} style={{ margin: "4px 0", paddingLeft: 18 }}>
        {entries.map((e) => {
          const added = isConfigured(e, servers);
          return (
            <li key={e.name} aria-label={e.title} style={{ marginBottom: 4 }}>
              <button type="button" className="link" onClick={() => {
                  setOpen(false);
                  onPick(e);
                }} title={e.url}>
                {e.title}
              </button>{" "}
              {added && (
                <span className="tag">
                  <Trans comment="tag: this server is already in the user's list">added</Trans>
                </span>
              )}
              <span className="muted small"> {e.about}</span>
              <br />
              <span className="small">{needsText(e.needs)}</span>
            </li>
          );
        })}
      </ul>
    </details>
  );
}
