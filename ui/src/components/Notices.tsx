import { useState } from "react";
import { Trans, useLingui } from "@lingui/react/macro";
import type { StartupNotice } from "../bindings";
import { dismissFailure, useFailures } from "../lib/failures";
import { sectionLabel } from "../lib/settingsSections";
import { CloseIcon } from "./Icons";

interface Item {
  key: number;
  title: string;
  detail: string;
  /** A Settings section that shows more. */
  section?: string | null;
}

function NoticeList({ items, role, onDismiss }: { items: Item[]; role: "status" | "alert"; onDismiss: (key: number) => void }) {
  const { t } = useLingui();
  if (items.length === 0) return null;
  return (
    <div className="notices">
      {items.map(({ section, ...item }) => {
        const sectionName = section ? sectionLabel(section, t) : "";
        return (
          <div key={item.key} className="notice" role={role}>
            <div>
              <strong>{item.title}</strong>
              <p>{item.detail}</p>
              {section && (
                <p>
                  <a href={`#/settings?section=${section}`} onClick={() => onDismiss(item.key)}>
                    <Trans>Open Settings → {sectionName}</Trans>
                  </a>
                </p>
              )}
            </div>
            <button type="button" className="icon-button" aria-label={t`Dismiss`} onClick={() => onDismiss(item.key)}>
              <CloseIcon />
            </button>
          </div>
        );
      })}
    </div>
  );
}

/** Things from start-up worth a person's attention, each dismissible. */
export function Notices({ notices }: { notices: StartupNotice[] }) {
  const [dismissed, setDismissed] = useState<number[]>([]);
  const items = notices
    .map((n, key) => ({ key, title: n.title, detail: n.detail, section: n.section }))
    .filter(({ key }) => !dismissed.includes(key));
  return <NoticeList items={items} role="status" onDismiss={(key) => setDismissed((d) => [...d, key])} />;
}

/** Actions that failed where nothing else would show it (`lib/failures`), each dismissible. */
export function FailureNotices() {
  const items = useFailures().map((f) => ({ key: f.id, title: f.title, detail: f.detail }));
  return <NoticeList items={items} role="alert" onDismiss={dismissFailure} />;
}
