import { lazy, Suspense, type ComponentProps } from "react";

// The renderer (markdown, math, highlighting) loads after the first paint; until it arrives
// the text shows as plain text, so nothing waits on it.
const Renderer = lazy(() => import("./Markdown").then((m) => ({ default: m.Markdown })));

export function Markdown(props: ComponentProps<typeof Renderer>) {
  return (
    <Suspense fallback={<div className="markdown plain">{props.markdown}</div>}>
      <Renderer {...props} />
    </Suspense>
  );
}
