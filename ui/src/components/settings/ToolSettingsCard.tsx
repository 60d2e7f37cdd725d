import { useState } from "react";
import type { RetrieverChoice, RuleDecision, ToolSettings } from "../../bindings";
import { useSettings } from "../../lib/settings";

const RETRIEVERS: { value: RetrieverChoice; label: string }[] = [
  { value: "auto", label: "Best available" },
  { value: "mini_lm", label: "Built-in model (all-MiniLM-L6-v2)" },
  { value: "ollama", label: "Ollama embeddings" },
  { value: "bm25", label: "Keywords (BM25)" },
];

/** Settings -> Tools: how many tools the model sees, which always, and what runs unasked. */
export function ToolSettingsCard() {
  const { settings, setTools } = useSettings();
  const [pattern, setPattern] = useState("");
  const [decision, setDecision] = useState<RuleDecision>("allow");
  const tools = settings?.tools;
  if (!tools) return null;
  const rules = tools.rules ?? [];
  const save = (change: Partial<ToolSettings>) => void setTools({ ...tools, ...change });
  const number = (value: string, min: number) => Math.max(min, Math.round(Number(value) || min));
  return (
    <>
      <fieldset className="card">
        <legend>Tools</legend>
        <label className="check">
          <input type="checkbox" checked={tools.enabled} onChange={(e) => save({ enabled: e.target.checked })} />
          Let models use tools from MCP servers
        </label>
        <label className="check">
          <input type="checkbox" checked={tools.allow_read_only} onChange={(e) => save({ allow_read_only: e.target.checked })} />
          Run tools marked read-only without asking
        </label>
        <label className="check">
          <input type="checkbox" checked={tools.skip_with_images} onChange={(e) => save({ skip_with_images: e.target.checked })} />
          Offer no tools when an image is attached
        </label>
        <label className="field">
          Tools offered per message (K)
          <input type="number" aria-label="Tools per message" min={1} value={tools.top_k} onChange={(e) => save({ top_k: number(e.target.value, 1) })} />
        </label>
        <label className="field">
          Tool rounds per answer
          <input type="number" aria-label="Tool rounds" min={1} value={tools.max_rounds} onChange={(e) => save({ max_rounds: number(e.target.value, 1) })} />
        </label>
        <label className="field">
          Longest tool result (characters)
          <input
            type="number"
            aria-label="Longest tool result"
            min={500}
            step={1000}
            value={tools.max_result_chars}
            onChange={(e) => save({ max_result_chars: number(e.target.value, 500) })}
          />
        </label>
        <label className="field">
          Picking the tools
          <select aria-label="Retriever" value={tools.retriever} onChange={(e) => save({ retriever: e.target.value as RetrieverChoice })}>
            {RETRIEVERS.map((r) => (
              <option key={r.value} value={r.value}>
                {r.label}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          Always offered (server:tool, one per line)
          <textarea
            aria-label="Always-on tools"
            rows={3}
            defaultValue={(tools.always_on ?? []).join("\n")}
            onBlur={(e) => save({ always_on: e.target.value.split("\n").map((l) => l.trim()).filter(Boolean) })}
          />
        </label>
      </fieldset>
      <fieldset className="card">
        <legend>Approval rules</legend>
        <p className="muted small">Checked in this order: deny, then ask, then allow. Patterns are server:tool; either part may be *.</p>
        <ul className="rules">
          {rules.map((r, i) => (
            <li key={`${r.pattern}-${i}`}>
              <code>{r.pattern}</code> <span className={`tag ${r.decision}`}>{r.decision}</span>
              <button type="button" className="link" onClick={() => save({ rules: rules.filter((_, j) => j !== i) })}>
                Remove
              </button>
            </li>
          ))}
          {rules.length === 0 && <li className="muted small">No rules: every tool asks first.</li>}
        </ul>
        <div className="inline-form">
          <input aria-label="Rule pattern" placeholder="demo:*" value={pattern} onChange={(e) => setPattern(e.target.value)} />
          <select aria-label="Rule decision" value={decision} onChange={(e) => setDecision(e.target.value as RuleDecision)}>
            <option value="allow">allow</option>
            <option value="ask">ask</option>
            <option value="deny">deny</option>
          </select>
          <button
            type="button"
            disabled={!pattern.trim()}
            onClick={() => {
              save({ rules: [...rules, { pattern: pattern.trim(), decision }] });
              setPattern("");
            }}
          >
            Add rule
          </button>
        </div>
      </fieldset>
    </>
  );
}
