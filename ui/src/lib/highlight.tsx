import { Fragment, type ReactNode } from "react";

// The engine marks search matches with U+0002 ... U+0003; render them as <mark> without HTML.
const START = "\u0002";
const END = "\u0003";

export function highlight(snippet: string): ReactNode[] {
  const out: ReactNode[] = [];
  let rest = snippet;
  let key = 0;
  while (rest.length > 0) {
    const start = rest.indexOf(START);
    if (start < 0) {
      out.push(<Fragment key={key++}>{rest}</Fragment>);
      break;
    }
    if (start > 0) out.push(<Fragment key={key++}>{rest.slice(0, start)}</Fragment>);
    const end = rest.indexOf(END, start + 1);
    const stop = end < 0 ? rest.length : end;
    out.push(<mark key={key++}>{rest.slice(start + 1, stop)}</mark>);
    rest = rest.slice(Math.min(stop + 1, rest.length));
  }
  return out;
}
