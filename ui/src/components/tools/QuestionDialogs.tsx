import { useState } from "react";
import { Trans, useLingui } from "@lingui/react/macro";
import type { OpenQuestion, ElicitationQuestion, SamplingQuestion, Value } from "../../bindings";
import { formatNumber } from "../../lib/format";
import { useQuestions } from "../../lib/questions";
import { ModalDialog } from "../ModalDialog";

/** Questions MCP servers ask outside a tool card: a form to fill (elicitation) or a request
 * to use the model (sampling). Each names the server that asks; decline and cancel are always offered. */
export function QuestionDialogs() {
  const { t } = useLingui();
  const { open } = useQuestions();
  // Approvals and memory proposals are answered on their tool call's card.
  const ask = open.find((a) => a.question.kind === "elicitation" || a.question.kind === "sampling");
  if (!ask) return null;
  return (
    <ModalDialog key={ask.id} className="dialog card" label={t({ message: "A server asks", comment: "dialog: an MCP server asks the user something" })}>
      {ask.question.kind === "elicitation" && <Elicitation ask={ask} question={ask.question} />}
      {ask.question.kind === "sampling" && <Sampling ask={ask} question={ask.question} />}
    </ModalDialog>
  );
}

interface Field {
  name: string;
  title: string;
  type: string;
  options: string[] | null;
  required: boolean;
  description: string | null;
}

function fields(schema: unknown): Field[] {
  const s = (schema ?? {}) as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
  return Object.entries(s.properties ?? {}).map(([name, p]) => ({
    name,
    title: typeof p.title === "string" ? p.title : name,
    type: typeof p.type === "string" ? p.type : "string",
    options: Array.isArray(p.enum) ? p.enum.map(String) : null,
    required: (s.required ?? []).includes(name),
    description: typeof p.description === "string" ? p.description : null,
  }));
}

function Elicitation({ ask, question }: { ask: OpenQuestion; question: ElicitationQuestion }) {
  const { answer } = useQuestions();
  const list = fields(question.schema);
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const server = question.server;
  const missing = list.filter((f) => f.required && f.type !== "boolean" && !values[f.name]);
  const submit = () => {
    const content: { [key: string]: Value } = {};
    for (const f of list) {
      const v = values[f.name];
      if (v === undefined || v === "") continue;
      content[f.name] = f.type === "number" || f.type === "integer" ? Number(v) : v;
    }
    void answer(ask.id, { kind: "elicitation", action: "accept", content });
  };
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <h2>
        <Trans comment="an MCP server asks the user to fill a form">
          <strong>{server}</strong> asks
        </Trans>
      </h2>
      <p className="pre-line">{question.message}</p>
      {list.map((f) => (
        <label key={f.name} className="field">
          <span>
            {f.title}
            {f.required && " *"}
          </span>
          {f.type === "boolean" ? (
            <input type="checkbox" checked={values[f.name] === true} onChange={(e) => setValues({ ...values, [f.name]: e.target.checked })} />
          ) : f.options ? (
            <select value={String(values[f.name] ?? "")} onChange={(e) => setValues({ ...values, [f.name]: e.target.value })}>
              <option value="">
                <Trans comment="an empty choice in a list">Choose…</Trans>
              </option>
              {f.options.map((o) => (
                <option key={o}>{o}</option>
              ))}
            </select>
          ) : (
            <input
              type={f.type === "number" || f.type === "integer" ? "number" : "text"}
              value={String(values[f.name] ?? "")}
              onChange={(e) => setValues({ ...values, [f.name]: e.target.value })}
            />
          )}
          {f.description && <small className="muted">{f.description}</small>}
        </label>
      ))}
      <div className="buttons">
        <button type="submit" className="primary" disabled={missing.length > 0}>
          <Trans context="server form" comment="button: send the form's answers to the server">Send</Trans>
        </button>
        <button type="button" onClick={() => void answer(ask.id, { kind: "elicitation", action: "decline", content: null })}>
          <Trans context="server form" comment="button: refuse to answer the server's form">Decline</Trans>
        </button>
        <button type="button" onClick={() => void answer(ask.id, { kind: "elicitation", action: "cancel", content: null })}>
          <Trans context="server form" comment="button: close the server's form without answering">Cancel</Trans>
        </button>
      </div>
    </form>
  );
}

function Sampling({ ask, question }: { ask: OpenQuestion; question: SamplingQuestion }) {
  const { answer } = useQuestions();
  const tokens = formatNumber(question.max_tokens);
  const { server, model } = question;
  return (
    <div>
      <h2>
        <Trans>
          <strong>{server}</strong> wants to use your model
        </Trans>
      </h2>
      <p className="muted">
        <Trans>
          It asks {model} for up to {tokens} tokens. Nothing is sent unless you allow it.
        </Trans>
      </p>
      {question.system_prompt && <pre className="tool-args">{question.system_prompt}</pre>}
      {question.messages.map((m, i) => (
        <pre key={i} className="tool-args">
          {m}
        </pre>
      ))}
      <div className="buttons">
        <button type="button" className="primary" onClick={() => void answer(ask.id, { kind: "sampling", approve: true })}>
          <Trans context="server sampling approval" comment="button: let the server use the model with the messages shown">Allow</Trans>
        </button>
        <button type="button" className="danger" onClick={() => void answer(ask.id, { kind: "sampling", approve: false })}>
          <Trans context="server sampling approval" comment="button: refuse what the server asks">Deny</Trans>
        </button>
      </div>
    </div>
  );
}
