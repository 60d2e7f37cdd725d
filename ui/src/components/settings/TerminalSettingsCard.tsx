import { useCallback, useEffect, useState } from "react";
import type { MessageDescriptor } from "@lingui/core";
import { msg } from "@lingui/core/macro";
import { Trans, useLingui } from "@lingui/react/macro";
import type { AskLevel, TerminalSettings, TerminalStatus } from "../../bindings";
import { call, commands, errorMessage } from "../../ipc";
import { useSettings } from "../../lib/settings";
import { NumberField } from "./ToolSettingsCard";

const LEVELS: { value: AskLevel; label: MessageDescriptor }[] = [
  { value: "always", label: msg`Before every command` },
  { value: "on_miss", label: msg`Unless I always allowed it` },
  { value: "off", label: msg`Never (the blocklist and the sandbox still apply)` },
];

/** Settings -> Terminal: when Perch asks, where commands run and may write, the network and
 * the sandbox in force (the commands you always allow are under Permissions). */
export function TerminalSettingsCard() {
  const { t } = useLingui();
  const { settings, setTerminal } = useSettings();
  const [status, setStatus] = useState<TerminalStatus | null>(null);
  const [error, setError] = useState<string | null>(null);
  const reload = useCallback(() => {
    call(commands.terminalStatus()).then(setStatus, (e) => setError(errorMessage(e)));
  }, []);
  useEffect(reload, [reload, settings?.terminal]);
  const stored = settings?.terminal;
  if (!stored) return null;
  // Every field has a default on the Rust side; fill them in for the form.
  const terminal: Required<TerminalSettings> = {
    enabled: stored.enabled ?? true,
    ask_level: stored.ask_level ?? "on_miss",
    timeout_secs: stored.timeout_secs ?? 120,
    working_folder: stored.working_folder ?? "",
    writable_folders: stored.writable_folders ?? [],
    pass_env: stored.pass_env ?? [],
    network: stored.network ?? true,
    max_output_mb: stored.max_output_mb ?? 64,
  };
  const save = (change: Partial<TerminalSettings>) => void setTerminal({ ...terminal, ...change });
  return (
    <>
      <fieldset className="card">
        <legend>
          <Trans>Terminal</Trans>
        </legend>
        <label className="check">
          <input type="checkbox" checked={terminal.enabled} onChange={(e) => save({ enabled: e.target.checked })} />
          <Trans>Let models run commands in a terminal</Trans>
        </label>
        <label className="field">
          <Trans>Ask before a command runs</Trans>
          <select aria-label={t`Ask level`} value={terminal.ask_level} onChange={(e) => save({ ask_level: e.target.value as AskLevel })}>
            {LEVELS.map((l) => (
              <option key={l.value} value={l.value}>
                {t(l.label)}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <Trans>Working folder (commands run here and may change files only here)</Trans>
          <input
            aria-label={t`Working folder`}
            defaultValue={terminal.working_folder}
            placeholder={t`~/projects/app (none yet: the first command asks)`}
            onBlur={(e) => e.target.value !== terminal.working_folder && save({ working_folder: e.target.value.trim() })}
          />
        </label>
        <label className="field">
          <Trans>Other folders commands may change (one per line)</Trans>
          <textarea
            aria-label={t`Writable folders`}
            rows={2}
            defaultValue={terminal.writable_folders.join("\n")}
            onBlur={(e) => save({ writable_folders: e.target.value.split("\n").map((l) => l.trim()).filter(Boolean) })}
          />
        </label>
        <label className="field">
          <Trans>
            Environment variables passed to commands besides the usual ones (names, one per line; keys and tokens never
            pass)
          </Trans>
          <textarea
            aria-label={t`Variables passed to commands`}
            rows={2}
            defaultValue={terminal.pass_env.join("\n")}
            onBlur={(e) => save({ pass_env: e.target.value.split(/[\s,]+/).map((l) => l.trim()).filter(Boolean) })}
          />
        </label>
        <label className="check">
          <input type="checkbox" checked={terminal.network} onChange={(e) => save({ network: e.target.checked })} />
          <Trans>Let commands use the network</Trans>
        </label>
        <NumberField
          label={t`Time limit per command (seconds, at most 120)`}
          aria={t`Time limit`}
          min={1}
          value={terminal.timeout_secs}
          onSave={(n) => save({ timeout_secs: Math.min(n, 120) })}
        />
        <NumberField
          label={t`Most output per command (MB)`}
          aria={t`Most output`}
          min={1}
          value={terminal.max_output_mb}
          onSave={(n) => save({ max_output_mb: n })}
        />
        {status && (
          <p className={status.sandbox.enforced ? "muted small" : "warning small"} role="status" aria-label={t`Sandbox`}>
            {status.sandbox.summary}
          </p>
        )}
      </fieldset>
      {error && (
        <p className="error small" role="alert">
          {error}
        </p>
      )}
      <p className="muted small center">
        <Trans>Commands you always allow, and conversations given their own folder: Settings → Permissions.</Trans>
      </p>
    </>
  );
}
