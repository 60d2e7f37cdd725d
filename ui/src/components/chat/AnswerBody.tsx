import type { ReactNode } from "react";
import type { FileReference, Progress, ToolCallRecord } from "../../bindings";
import { Markdown } from "../LazyMarkdown";
import { ToolCallCard } from "../tools/ToolCallCard";
import { StreamingMarkdown } from "./StreamingMarkdown";

interface Props {
  text: string;
  toolCalls: ToolCallRecord[];
  progress?: Record<string, Progress>;
  streaming?: boolean;
  /** Checked file references of a saved answer (see useAnswerReferences). */
  references?: Map<string, FileReference>;
  onOpenReference?: (target: string) => void;
}

/** An answer's text with its tool cards where they happened (by their text offset). */
export function AnswerBody({ text, toolCalls, progress, streaming, references, onOpenReference }: Props) {
  const markdown = (key: string, segment: string) => (
    <Markdown key={key} markdown={segment} references={references} onOpenReference={onOpenReference} />
  );
  if (toolCalls.length === 0) {
    if (!text) return null;
    return streaming ? <StreamingMarkdown text={text} /> : markdown("all", text);
  }
  // Offsets count characters (code points), as the engine does.
  const chars = Array.from(text);
  const parts: ReactNode[] = [];
  let at = 0;
  const offsets = [...new Set(toolCalls.map((c) => Math.min(c.text_offset, chars.length)))].sort((a, b) => a - b);
  for (const offset of offsets) {
    const segment = chars.slice(at, offset).join("");
    if (segment.trim()) parts.push(markdown(`t${at}`, segment));
    for (const c of toolCalls.filter((t) => Math.min(t.text_offset, chars.length) === offset)) {
      parts.push(<ToolCallCard key={c.id} call={c} progress={progress?.[c.id]} live={streaming} />);
    }
    at = offset;
  }
  const rest = chars.slice(at).join("");
  if (rest) parts.push(streaming ? <StreamingMarkdown key="rest" text={rest} /> : markdown("rest", rest));
  return <>{parts}</>;
}
