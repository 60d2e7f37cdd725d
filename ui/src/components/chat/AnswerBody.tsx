import type { ReactNode } from "react";
import type { Progress, ToolCallRecord } from "../../bindings";
import { Markdown } from "../LazyMarkdown";
import { ToolCallCard } from "../tools/ToolCallCard";
import { StreamingMarkdown } from "./StreamingMarkdown";

interface Props {
  text: string;
  toolCalls: ToolCallRecord[];
  progress?: Record<string, Progress>;
  streaming?: boolean;
}

/** An answer's text with its tool cards where they happened (by their text offset). */
export function AnswerBody({ text, toolCalls, progress, streaming }: Props) {
  if (toolCalls.length === 0) {
    if (!text) return null;
    return streaming ? <StreamingMarkdown text={text} /> : <Markdown markdown={text} />;
  }
  // Offsets count characters (code points), as the engine does.
  const chars = Array.from(text);
  const parts: ReactNode[] = [];
  let at = 0;
  const offsets = [...new Set(toolCalls.map((c) => Math.min(c.text_offset, chars.length)))].sort((a, b) => a - b);
  for (const offset of offsets) {
    const segment = chars.slice(at, offset).join("");
    if (segment.trim()) parts.push(<Markdown key={`t${at}`} markdown={segment} />);
    for (const c of toolCalls.filter((t) => Math.min(t.text_offset, chars.length) === offset)) {
      parts.push(<ToolCallCard key={c.id} call={c} progress={progress?.[c.id]} />);
    }
    at = offset;
  }
  const rest = chars.slice(at).join("");
  if (rest) parts.push(streaming ? <StreamingMarkdown key="rest" text={rest} /> : <Markdown key="rest" markdown={rest} />);
  return <>{parts}</>;
}
