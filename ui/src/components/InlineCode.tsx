/** A message from the engine with commands in backticks ("start it with `ollama serve`"),
 * shown with the commands as code rather than with the backticks. */
export function WithCode({ text }: { text: string }) {
  const parts = text.split("`");
  // An odd number of backticks leaves the last one as it was typed.
  if (parts.length % 2 === 0) return <>{text}</>;
  return <>{parts.map((part, i) => (i % 2 === 1 ? <code key={i}>{part}</code> : part))}</>;
}
