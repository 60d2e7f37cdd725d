import { shellTokens } from "../../lib/terminal";

/** A command line with its program, options, strings and operators told apart. */
export function ShellCommand({ command }: { command: string }) {
  return (
    <code className="shell-command">
      {shellTokens(command).map((t, i) =>
        t.kind === "space" || t.kind === "word" ? t.text : (
          <span key={i} className={`sh-${t.kind}`}>
            {t.text}
          </span>
        ),
      )}
    </code>
  );
}
