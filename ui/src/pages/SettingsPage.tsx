import { useState, type KeyboardEvent } from "react";
import { useSearchParams } from "react-router";
import type { AppStatus, ThemePreference } from "../bindings";
import { ReviewSettingsCard } from "../components/ReviewSettingsCard";
import { CaptureSettingsCard } from "../components/settings/CaptureSettingsCard";
import { ConnectionsSettings } from "../components/settings/ConnectionsSettings";
import { LogsSettings } from "../components/settings/LogsSettings";
import { ModelsSettings } from "../components/settings/ModelsSettings";
import { McpServers } from "../components/settings/McpServers";
import { PermissionsSettings } from "../components/settings/PermissionsSettings";
import { TerminalSettingsCard } from "../components/settings/TerminalSettingsCard";
import { ToolSettingsCard } from "../components/settings/ToolSettingsCard";
import { UpdatesCard } from "../components/settings/UpdatesCard";
import { openShortcutSheet } from "../components/ShortcutSheet";
import { VoiceSettingsCard } from "../components/settings/VoiceSettingsCard";
import { useSettings } from "../lib/settings";
import { useHoldsUnsentWork } from "../lib/unsentWork";
import { SHORTCUTS } from "../lib/shortcuts";

const THEMES: { value: ThemePreference; label: string }[] = [
  { value: "system", label: "System" },
  { value: "light", label: "Light" },
  { value: "dark", label: "Dark" },
];

/** Settings -> General -> Memory: after how long hidden the page is freed (0: never). */
const RELEASE_AFTER: { secs: number; label: string }[] = [
  { secs: 60, label: "1 minute" },
  { secs: 180, label: "3 minutes" },
  { secs: 600, label: "10 minutes" },
  { secs: 1800, label: "30 minutes" },
  { secs: 0, label: "Never" },
];

const SOURCES: Record<string, string> = {
  env: "set by PERCH_DATA_DIR",
  portable: "portable mode",
  dev: "development build",
  default: "default location",
};

const SECTIONS = ["General", "Models", "Voice", "Tools", "Terminal", "Permissions", "MCP", "Connections", "Reviews", "Logs"] as const;
type Section = (typeof SECTIONS)[number];

export function SettingsPage({ status }: { status: AppStatus }) {
  const { error } = useSettings();
  // `#/settings?section=Logs` opens a section (a notice's link to a crash report).
  const [params] = useSearchParams();
  const asked = params.get("section");
  // A tab clicked counts until a link asks for another section.
  const [picked, setPicked] = useState<{ asked: string | null; section: Section } | null>(null);
  const section = picked?.asked === asked ? picked.section : (SECTIONS.find((s) => s === asked) ?? "General");
  const setSection = (s: Section) => setPicked({ asked, section: s });
  const onTabKey = (e: KeyboardEvent<HTMLDivElement>) => {
    const at = SECTIONS.indexOf(section);
    const to =
      e.key === "ArrowRight"
        ? (at + 1) % SECTIONS.length
        : e.key === "ArrowLeft"
          ? (at - 1 + SECTIONS.length) % SECTIONS.length
          : e.key === "Home"
            ? 0
            : e.key === "End"
              ? SECTIONS.length - 1
              : null;
    if (to === null) return;
    e.preventDefault();
    setSection(SECTIONS[to]);
    document.getElementById(`settings-tab-${SECTIONS[to]}`)?.focus();
  };
  // Its forms may hold typing that is not saved yet: never reloaded under the user.
  useHoldsUnsentWork(true);

  return (
    <section className="settings" aria-label="Settings">
      {/* The tabs and a failed save stay in view however far the page is scrolled. */}
      <div className="settings-head">
        {/* Tabs as the ARIA pattern has them: one Tab stop, the arrows (and Home, End) move
            between sections. */}
        <div className="segmented sections" role="tablist" aria-label="Settings sections" onKeyDown={onTabKey}>
          {SECTIONS.map((s) => (
            <button
              key={s}
              id={`settings-tab-${s}`}
              type="button"
              role="tab"
              aria-selected={section === s}
              aria-controls="settings-panel"
              tabIndex={section === s ? 0 : -1}
              className={section === s ? "selected" : undefined}
              onClick={() => setSection(s)}
            >
              {s}
            </button>
          ))}
        </div>
        {error && (
          <div className="error-card" role="alert">
            <strong>Settings could not be saved</strong>
            <p>{error}</p>
          </div>
        )}
      </div>
      <div role="tabpanel" id="settings-panel" aria-labelledby={`settings-tab-${section}`}>
        {section === "General" && <General status={status} />}
        {section === "Models" && <ModelsSettings />}
        {section === "Voice" && <VoiceSettingsCard />}
        {section === "Tools" && <ToolSettingsCard />}
        {section === "Terminal" && <TerminalSettingsCard />}
        {section === "Permissions" && <PermissionsSettings />}
        {section === "MCP" && <McpServers />}
        {section === "Connections" && <ConnectionsSettings />}
        {section === "Reviews" && <ReviewSettingsCard />}
        {section === "Logs" && <LogsSettings />}
      </div>
    </section>
  );
}

function General({ status }: { status: AppStatus }) {
  const { settings, setTheme, setHidden } = useSettings();
  return (
    <>
      <fieldset className="card">
        <legend>Appearance</legend>
        <div className="segmented" role="radiogroup" aria-label="Theme">
          {THEMES.map((t) => (
            <label key={t.value} className={settings?.theme === t.value ? "selected" : undefined}>
              <input
                type="radio"
                name="theme"
                value={t.value}
                checked={settings?.theme === t.value}
                disabled={!settings}
                onChange={() => void setTheme(t.value)}
              />
              {t.label}
            </label>
          ))}
        </div>
      </fieldset>
      <CaptureSettingsCard />
      <fieldset className="card">
        <legend>Keyboard</legend>
        <dl className="facts">
          <dt>Mini mode</dt>
          <dd>
            <kbd>{SHORTCUTS.mini}</kbd>
          </dd>
          <dt>New chat</dt>
          <dd>
            <kbd>{SHORTCUTS.newChat}</kbd>
          </dd>
          <dt>Stop an answer</dt>
          <dd>
            <kbd>Esc</kbd>
          </dd>
          <dt>Edit the last question</dt>
          <dd>
            <kbd>↑</kbd>
          </dd>
          <dt>Quit</dt>
          <dd>
            <kbd>{SHORTCUTS.quit}</kbd>
          </dd>
        </dl>
        <div className="buttons">
          <button type="button" onClick={openShortcutSheet}>
            All shortcuts (?)
          </button>
        </div>
      </fieldset>
      <fieldset className="card">
        <legend>Memory</legend>
        <label className="field">
          Free the window's memory when hidden for
          <select
            value={settings?.hidden.release_page_after_secs ?? 180}
            disabled={!settings}
            onChange={(e) =>
              settings && void setHidden({ ...settings.hidden, release_page_after_secs: Number(e.target.value) })
            }
          >
            {RELEASE_AFTER.map((o) => (
              <option key={o.secs} value={o.secs}>
                {o.label}
              </option>
            ))}
          </select>
        </label>
        <p className="muted">
          About half of what Perch uses at rest is its window&apos;s page. Freed, it loads again when you show Perch
          (a fraction of a second), with your draft and where you were.
          {(settings?.hidden.reload_grown_page_after_secs ?? 0) > 0 && (
            <>
              {" "}
              A page that has grown well past its start (a long conversation, a flood of terminal output) is loaded
              again sooner, {settings?.hidden.reload_grown_page_after_secs} seconds into a hide.
            </>
          )}
        </p>
      </fieldset>
      <UpdatesCard />
      <fieldset className="card">
        <legend>Storage</legend>
        <dl className="facts">
          <dt>Data folder</dt>
          <dd className="path" title={status.data_dir ?? ""}>
            {status.data_dir}
          </dd>
          <dt>Chosen by</dt>
          <dd>{status.data_dir_source ? SOURCES[status.data_dir_source] : "—"}</dd>
          <dt>Database schema</dt>
          <dd>version {status.schema_version}</dd>
        </dl>
      </fieldset>
      <p className="muted center">Perch {status.version}</p>
    </>
  );
}
