import { useCallback, useEffect, useState } from "react";
import type { AskLevel, TerminalSettings, TerminalStatus } from "../../bindings";
import { call, commands, errorMessage } from "../../ipc";
import { useSettings } from "../../lib/settings";
import { NumberField } from "./ToolSettingsCard";

const LEVELS: { value: AskLevel; label: string }[] = [
  { value: "always", label: "Before every command" },
  { value: "on_miss", label: "Unless I always allowed it" },
  { value: "off", label: "Never (the blocklist and the sandbox still apply)" },
];

/** Settings -> Terminal: when Perch asks, where commands run and may write, the network and
 * the sandbox in force (the commands you always allow are under Permissions). */
export function TerminalSettingsCard() {
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
        <legend>Terminal</legend>
        <label className="check">
          <input type="checkbox" checked={terminal.enabled} onChange={(e) => save({ enabled: e.target.checked })} />
          Let models run commands in a terminal
        </label>
        <label className="field">
          Ask before a command runs
          <select aria-label="Ask level" value={terminal.ask_level} onChange={(e) => save({ ask_level: e.target.value as AskLevel })}>
            {LEVELS.map((l) => (
              <option key={l.value} value={l.value}>
                {l.label}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          Working folder (commands run here and may change files only here)
          <input
            aria-label="Working folder"
            defaultValue={terminal.working_folder}
            placeholder="~/projects/app (none yet: the first command asks)"
            onBlur={(e) => e.target.value !== terminal.working_folder && save({ working_folder: e.target.value.trim() })}
          />
        </label>
        <label className="field">
          Other folders commands may change (one per line)
          <textarea
            aria-label="Writable folders"
            rows={2}
            defaultValue={terminal.writable_folders.join("\n")}
            onBlur={(e) => save({ writable_folders: e.target.value.split("\n").map((l) => l.trim()).filter(Boolean) })}
          />
        </label>
        <label className="field">
          Environment variables passed to commands besides the usual ones (names, one per line; keys and tokens never pass)
          <textarea
            aria-label="Variables passed to commands"
            rows={2}
            defaultValue={terminal.pass_env.join("\n")}
            onBlur={(e) => save({ pass_env: e.target.value.split(/[\s,]+/).map((l) => l.trim()).filter(Boolean) })}
          />
        </label>
        <label className="check">
          <input type="checkbox" checked={terminal.network} onChange={(e) => save({ network: e.target.checked })} />
          Let commands use the network
        </label>
        <NumberField label="Time limit per command (seconds, at most 120)" aria="Time limit" min={1} value={terminal.timeout_secs} onSave={(n) => save({ timeout_secs: Math.min(n, 120) })} />
        <NumberField label="Most output per command (MB)" aria="Most output" min={1} value={terminal.max_output_mb} onSave={(n) => save({ max_output_mb: n })} />
        {status && (
          <p className={status.sandbox.enforced ? "muted small" : "warning small"} role="status" aria-label="Sandbox">
            {status.sandbox.summary}
          </p>
        )}
      </fieldset>
      {error && (
        <p className="error small" role="alert">
          {error}
        </p>
      )}
      <p className="muted small center">Commands you always allow, and conversations given their own folder: Settings → Permissions.</p>
    </>
  );
}
