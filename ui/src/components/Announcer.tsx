import { useAnnouncements } from "../lib/announce";

/** The window's one polite live region (see `lib/announce`). */
export function Announcer() {
  const said = useAnnouncements();
  return (
    <div className="sr-only" role="status" aria-live="polite" aria-relevant="additions">
      {said.map((s) => (
        <p key={s.id}>{s.text}</p>
      ))}
    </div>
  );
}
