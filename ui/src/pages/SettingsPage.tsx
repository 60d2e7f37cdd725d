import { useRef, useState, type KeyboardEvent } from "react";
import { useSearchParams } from "react-router";
import type { MessageDescriptor } from "@lingui/core";
import { msg } from "@lingui/core/macro";
import { Plural, Trans, useLingui } from "@lingui/react/macro";
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
import { KnowledgeCard } from "../components/settings/KnowledgeCard";
import { MemoriesCard } from "../components/settings/MemoriesCard";
import { LanguageCard } from "../components/settings/LanguageCard";
import { UpdatesCard } from "../components/settings/UpdatesCard";
import { openShortcutSheet } from "../components/ShortcutSheet";
import { VoiceSettingsCard } from "../components/settings/VoiceSettingsCard";
import { WindowOnTop } from "../components/settings/WindowOnTop";
import { StartAtLoginSwitch } from "../components/settings/StartAtLogin";
import { TEXT_SIZES, useSettings } from "../lib/settings";
import { SECTIONS, sectionLabel, type Section } from "../lib/settingsSections";
import { formatNumber } from "../lib/format";
import { useHoldsUnsentWork } from "../lib/unsentWork";
import { SHORTCUTS } from "../lib/shortcuts";

const THEMES: { value: ThemePreference; label: MessageDescriptor }[] = [
  { value: "system", label: msg({ message: "System", comment: "theme: as the system's" }) },
  { value: "light", label: msg({ message: "Light", comment: "theme" }) },
  { value: "dark", label: msg({ message: "Dark", comment: "theme" }) },
];

/** Settings -> General -> Memory: after how long hidden the page is freed (0: never). */
const RELEASE_AFTER: { secs: number; label: MessageDescriptor }[] = [
  { secs: 60, label: msg`1 minute` },
  { secs: 180, label: msg`3 minutes` },
  { secs: 600, label: msg`10 minutes` },
  { secs: 1800, label: msg`30 minutes` },
  { secs: 0, label: msg({ message: "Never", comment: "free the window's memory when hidden for: never" }) },
];

/** Who chose the data folder (Settings -> General -> Storage -> Chosen by). */
const SOURCES: Record<string, MessageDescriptor> = {
  env: msg`set by PERCH_DATA_DIR`,
  portable: msg`portable mode`,
  dev: msg`development build`,
  default: msg`default location`,
};

export function SettingsPage({ status }: { status: AppStatus }) {
  const { t } = useLingui();
  const { error } = useSettings();
  // `#/settings?section=Logs` opens a section (a notice's link to a crash report).
  const [params] = useSearchParams();
  const asked = params.get("section");
  // A tab clicked counts until a link asks for another section.
  const [picked, setPicked] = useState<{ asked: string | null; section: Section } | null>(null);
  // eslint-disable-next-line lingui/no-unlocalized-strings -- a section's id
  const section = picked?.asked === asked ? picked.section : (SECTIONS.find((s) => s === asked) ?? "General");
  const page = useRef<HTMLElement>(null);
  const setSection = (s: Section) => {
    // Another tab opens at its top, under the tabs, not at the depth the last one was read to.
    const area = page.current?.closest<HTMLElement>(".page");
    if (area && s !== section) area.scrollTop = 0;
    setPicked({ asked, section: s });
  };
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
    <section className="settings" aria-label={t`Settings`} ref={page}>
      {/* The tabs and a failed save stay in view however far the page is scrolled. */}
      <div className="settings-head">
        {/* Tabs as the ARIA pattern has them: one Tab stop, the arrows (and Home, End) move
            between sections. */}
        <div className="segmented sections" role="tablist" aria-label={t`Settings sections`} onKeyDown={onTabKey}>
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
              {sectionLabel(s, t)}
            </button>
          ))}
        </div>
        {error && (
          <div className="error-card" role="alert">
            <strong>
              <Trans>Settings could not be saved</Trans>
            </strong>
            <p>{error}</p>
          </div>
        )}
      </div>
      <div role="tabpanel" id="settings-panel" aria-labelledby={`settings-tab-${section}`}>
        {section === "General" && <General status={status} />}
        {section === "Models" && <ModelsSettings />}
        {section === "Voice" && <VoiceSettingsCard />}
        {section === "Tools" && (
          <>
            <ToolSettingsCard />
            <KnowledgeCard />
          </>
        )}
        {section === "Memories" && <MemoriesCard />}
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
  const { t } = useLingui();
  const { settings, setTheme, setTextSize, setHidden } = useSettings();
  const grownAfter = settings?.hidden.reload_grown_page_after_secs ?? 0;
  const schemaVersion = status.schema_version;
  const version = status.version;
  const source = status.data_dir_source ? SOURCES[status.data_dir_source] : undefined;
  return (
    <>
      <fieldset className="card">
        <legend>
          <Trans>Appearance</Trans>
        </legend>
        <div className="segmented" role="radiogroup" aria-label={t`Theme`}>
          {THEMES.map((theme) => (
            <label key={theme.value} className={settings?.theme === theme.value ? "selected" : undefined}>
              <input
                type="radio"
                name="theme"
                value={theme.value}
                checked={settings?.theme === theme.value}
                disabled={!settings}
                onChange={() => void setTheme(theme.value)}
              />
              {t(theme.label)}
            </label>
          ))}
        </div>
        <label className="field">
          <span>
            <Trans>Text size</Trans>
          </span>
          <select
            value={settings?.text_size ?? 100}
            disabled={!settings}
            aria-describedby="text-size-keys"
            onChange={(e) => void setTextSize(Number(e.target.value))}
          >
            {TEXT_SIZES.map((percent) => (
              <option key={percent} value={percent}>
                {formatNumber(percent / 100, { style: "percent" })}
              </option>
            ))}
          </select>
        </label>
        <p id="text-size-keys" className="muted small">
          <Trans>Ctrl+= and Ctrl+- change it anywhere in Perch; Ctrl+0 goes back to 100%.</Trans>
        </p>
        <WindowOnTop />
        <StartAtLoginSwitch />
      </fieldset>
      <LanguageCard />
      <CaptureSettingsCard />
      <fieldset className="card">
        <legend>
          <Trans>Keyboard</Trans>
        </legend>
        <dl className="facts">
          <dt>
            <Trans>Mini mode</Trans>
          </dt>
          <dd>
            <kbd>{SHORTCUTS.mini}</kbd>
          </dd>
          <dt>
            <Trans>New chat</Trans>
          </dt>
          <dd>
            <kbd>{SHORTCUTS.newChat}</kbd>
          </dd>
          <dt>
            <Trans>Stop an answer</Trans>
          </dt>
          <dd>
            { }
            <kbd>Esc</kbd>
          </dd>
          <dt>
            <Trans>Edit the last question</Trans>
          </dt>
          <dd>
            <kbd>↑</kbd>
          </dd>
          <dt>
            <Trans>Quit</Trans>
          </dt>
          <dd>
            <kbd>{SHORTCUTS.quit}</kbd>
          </dd>
        </dl>
        <div className="buttons">
          <button type="button" onClick={openShortcutSheet}>
            <Trans>All shortcuts (?)</Trans>
          </button>
        </div>
      </fieldset>
      <fieldset className="card">
        <legend>
          <Trans>Memory</Trans>
        </legend>
        <label className="field">
          <Trans>Free the window's memory when hidden for</Trans>
          <select
            value={settings?.hidden.release_page_after_secs ?? 180}
            disabled={!settings}
            onChange={(e) =>
              settings && void setHidden({ ...settings.hidden, release_page_after_secs: Number(e.target.value) })
            }
          >
            {RELEASE_AFTER.map((o) => (
              <option key={o.secs} value={o.secs}>
                {t(o.label)}
              </option>
            ))}
          </select>
        </label>
        <p className="muted">
          <Trans>
            About half of what Perch uses at rest is its window&apos;s page. Freed, it loads again when you show Perch
            (a fraction of a second), with your draft and where you were.
          </Trans>
          {grownAfter > 0 && (
            <>
              {" "}
              <Trans>
                A page that has grown well past its start (a long conversation, a flood of terminal output) is loaded
                again sooner, <Plural value={grownAfter} one="# second" other="# seconds" /> into a hide.
              </Trans>
            </>
          )}
        </p>
      </fieldset>
      <UpdatesCard />
      <fieldset className="card">
        <legend>
          <Trans>Storage</Trans>
        </legend>
        <dl className="facts">
          <dt>
            <Trans>Data folder</Trans>
          </dt>
          <dd className="path" title={status.data_dir ?? ""}>
            {status.data_dir}
          </dd>
          <dt>
            <Trans>Chosen by</Trans>
          </dt>
          <dd>{status.data_dir_source ? source && t(source) : "—"}</dd>
          <dt>
            <Trans>Database schema</Trans>
          </dt>
          <dd>
            <Trans>version {schemaVersion}</Trans>
          </dd>
        </dl>
      </fieldset>
      <p className="muted center">
        <Trans comment="the app's name and its version">Perch {version}</Trans>
      </p>
    </>
  );
}
