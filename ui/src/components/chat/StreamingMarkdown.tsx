import { memo } from "react";
import { Markdown } from "../LazyMarkdown";
import { splitBlocks } from "../../lib/blocks";

const Block = memo(function Block({ text }: { text: string }) {
  return <Markdown markdown={text} />;
});

/** Markdown that grows token by token: finished blocks stay put, only the last re-renders. */
export function StreamingMarkdown({ text }: { text: string }) {
  const blocks = splitBlocks(text);
  return (
    <div className="streaming">
      {blocks.map((block, i) => (
        <Block key={i} text={block} />
      ))}
    </div>
  );
}
