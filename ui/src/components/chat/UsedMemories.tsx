import { plural } from "@lingui/core/macro";
import { useLingui } from "@lingui/react/macro";
import { Link } from "react-router";

/** The memories an answer was given, folded above it: the user sees what the model was told
 * about them, and where to change it. */
export function UsedMemories({ memories }: { memories: string[] }) {
  const { t } = useLingui();
  if (memories.length === 0) return null;
  const count = memories.length;
  return (
    <details className="used-memories">
      <summary>
        {t`${plural(count, { one: "Given # memory", other: "Given # memories" })}`}
      </summary>
      <ul aria-label={t`Memories given to this answer`}>
        {memories.map((m, i) => (
          <li key={i}>{m}</li>
        ))}
      </ul>
      <Link to="/settings?section=Memories" className="small">
        {t({ message: "Manage memories", comment: "link to Settings -> Memories" })}
      </Link>
    </details>
  );
}
