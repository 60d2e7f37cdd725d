import { useEffect, useState } from "react";
import { Trans, useLingui } from "@lingui/react/macro";
import { call, commands } from "../../ipc";
import { matchLanguage } from "../../i18n";
import { LANGUAGES } from "../../locales/list";
import { useSettings } from "../../lib/settings";

/** Settings -> General -> Language: the system's (the default) or one of the UI's languages. */
export function LanguageCard() {
  const { t } = useLingui();
  const { settings, setLanguage } = useSettings();
  const [system, setSystem] = useState<string | null>(null);
  useEffect(() => {
    call(commands.uiLanguage()).then(
      (l) => setSystem(matchLanguage([l.system, navigator.language]).name),
      () => setSystem(matchLanguage([navigator.language]).name),
    );
  }, []);
  const chosen = settings?.language ?? "";
  return (
    <fieldset className="card">
      <legend>
        <Trans>Language</Trans>
      </legend>
      <label className="field">
        <span>
          <Trans>Perch's language</Trans>
        </span>
        <select value={chosen} disabled={!settings} onChange={(e) => void setLanguage(e.target.value || null)}>
          <option value="">{system ? t`As the system (${system})` : t`As the system`}</option>
          {LANGUAGES.map((l) => (
            <option key={l.tag} value={l.tag} lang={l.tag} dir={l.rtl ? "rtl" : "ltr"}>
              {l.name}
            </option>
          ))}
        </select>
      </label>
      <p className="muted small">
        <Trans>Dates and numbers follow it, and the model is told to answer in it unless you write in another language.</Trans>
      </p>
    </fieldset>
  );
}
