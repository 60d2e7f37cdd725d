import { useState } from "react";
import { useLingui } from "@lingui/react/macro";
import { formatNumber } from "../../lib/format";

/** The model's reasoning: open while it streams alone, folded once the answer starts. */
export function Thinking({ text, live, answering }: { text: string; live: boolean; answering: boolean }) {
  // `toggled` records the reader's own choice; until they make one, the section follows the stream.
  const { t } = useLingui();
  const [toggled, setToggled] = useState<boolean | null>(null);
  if (!text) return null;
  const open = toggled ?? (live && !answering);
  const words = formatNumber(text.trim().split(/\s+/).length);
  return (
    <details
      className="thinking"
      open={open}
      onToggle={(e) => {
        // Toggles that only follow `open` are not the reader's.
        const now = e.currentTarget.open;
        if (now !== open) setToggled(now);
      }}
    >
      <summary>{live && !answering ? t`Thinking…` : t({ message: `Thought (${words} words)`, comment: "the model's reasoning, folded" })}</summary>
      <div className="thinking-text">{text}</div>
    </details>
  );
}
