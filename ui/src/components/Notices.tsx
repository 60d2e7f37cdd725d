import { useState } from "react";
import type { StartupNotice } from "../bindings";
import { CloseIcon } from "./Icons";

/** Things from start-up worth a person's attention, each dismissible. */
export function Notices({ notices }: { notices: StartupNotice[] }) {
  const [dismissed, setDismissed] = useState<number[]>([]);
  const visible = notices.map((n, i) => ({ n, i })).filter(({ i }) => !dismissed.includes(i));
  if (visible.length === 0) return null;
  return (
    <div className="notices">
      {visible.map(({ n, i }) => (
        <div key={i} className="notice" role="status">
          <div>
            <strong>{n.title}</strong>
            <p>{n.detail}</p>
          </div>
          <button
            type="button"
            className="icon-button"
            aria-label="Dismiss"
            onClick={() => setDismissed((d) => [...d, i])}
          >
            <CloseIcon />
          </button>
        </div>
      ))}
    </div>
  );
}
