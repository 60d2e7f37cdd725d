import type { AppStatus, ThemePreference } from "../bindings";
import { ReviewSettingsCard } from "../components/ReviewSettingsCard";
import { useSettings } from "../lib/settings";
import { SHORTCUTS } from "../lib/shortcuts";

const THEMES: { value: ThemePreference; label: string }[] = [
  { value: "system", label: "System" },
  { value: "light", label: "Light" },
  { value: "dark", label: "Dark" },
];

const SOURCES: Record<string, string> = {
  env: "set by PERCH_DATA_DIR",
  portable: "portable mode",
  dev: "development build",
  default: "default location",
};

export function SettingsPage({ status }: { status: AppStatus }) {
  const { settings, error, setTheme } = useSettings();

  return (
    <section className="settings" aria-label="Settings">
      {error && (
        <div className="error-card" role="alert">
          <strong>Settings could not be saved</strong>
          <p>{error}</p>
        </div>
      )}
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
      <ReviewSettingsCard />
      <fieldset className="card">
        <legend>Keyboard</legend>
        <dl className="facts">
          <dt>Mini mode</dt>
          <dd>
            <kbd>{SHORTCUTS.mini}</kbd>
          </dd>
          <dt>Quit</dt>
          <dd>
            <kbd>{SHORTCUTS.quit}</kbd>
          </dd>
        </dl>
      </fieldset>
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
    </section>
  );
}
