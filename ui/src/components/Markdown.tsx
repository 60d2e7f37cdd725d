// The one markdown renderer (reviews now, chat next): GitHub-flavoured, sanitized, raw HTML
// never rendered, links opened by the app in the system browser and never by navigation, and
// file references turned into buttons that ask the engine to open the file.
import { memo, useRef, useState, type ComponentProps, type MouseEvent, type ReactNode } from "react";
import ReactMarkdown, { type Components } from "react-markdown";
import rehypeHighlight from "rehype-highlight";
import rehypeKatex from "rehype-katex";
import rehypeSanitize, { defaultSchema } from "rehype-sanitize";
import remarkGfm from "remark-gfm";
import remarkMath from "remark-math";
import "katex/dist/katex.min.css";
import type { FileReference } from "../bindings";
import { commands } from "../ipc";
import { remarkFileRefs } from "../lib/fileRefs";

// Sanitizing runs first, on what the markdown produced; KaTeX and highlighting run after it
// and only add their own markup. Math arrives as code with math classes, which must survive.
const schema = {
  ...defaultSchema,
  tagNames: [...(defaultSchema.tagNames ?? []), "button"],
  attributes: {
    ...defaultSchema.attributes,
    button: [["className", "file-ref"], "dataRef", ["type", "button"]],
    code: [["className", /^language-./, "math-inline", "math-display"]],
  },
};

const WEB_LINK = /^(https?:|mailto:)/i;

interface Props {
  markdown: string;
  /** Checked references by target; a reference missing here is shown as broken. */
  references?: Map<string, FileReference>;
  onOpenReference?: (target: string) => void;
}

export const Markdown = memo(function Markdown({ markdown, references, onOpenReference }: Props) {
  const components: Components = {
    a: ({ href, children }) => <WebLink href={href}>{children}</WebLink>,
    pre: (props) => <CodeBlock {...props} />,
    button: (props) => {
      const target = String((props as Record<string, unknown>)["data-ref"] ?? "");
      return (
        <FileRef target={target} reference={references?.get(target)} onOpen={onOpenReference}>
          {props.children}
        </FileRef>
      );
    },
  };
  return (
    <div className="markdown">
      <ReactMarkdown
        remarkPlugins={[remarkGfm, remarkMath, remarkFileRefs]}
        rehypePlugins={[[rehypeSanitize, schema], rehypeKatex, [rehypeHighlight, { detect: false }]]}
        components={components}
      >
        {markdown}
      </ReactMarkdown>
    </div>
  );
});

/** A fenced code block with a copy button. */
function CodeBlock({ children, node, ...rest }: ComponentProps<"pre"> & { node?: unknown }) {
  const pre = useRef<HTMLPreElement>(null);
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard?.writeText(pre.current?.textContent ?? "");
    setCopied(true);
    setTimeout(() => setCopied(false), 1200);
  };
  return (
    <div className="code-block">
      <button type="button" className="copy-code" aria-label="Copy code" onClick={() => void copy()}>
        {copied ? "Copied" : "Copy"}
      </button>
      <pre ref={pre} {...rest}>
        {children}
      </pre>
    </div>
  );
}

function WebLink({ href, children }: { href?: string; children: ReactNode }) {
  const safe = href && WEB_LINK.test(href) ? href : undefined;
  const open = (e: MouseEvent) => {
    e.preventDefault();
    if (safe) void commands.openUrl(safe);
  };
  return (
    <a href={safe} onClick={open} title={safe} rel="noreferrer">
      {children}
    </a>
  );
}

function FileRef(props: {
  target: string;
  reference?: FileReference;
  onOpen?: (target: string) => void;
  children: ReactNode;
}) {
  const { target, reference, onOpen, children } = props;
  if (!reference || reference.problem || !onOpen) {
    const why = reference?.problem ?? "This reference was not checked.";
    return (
      <span className="file-ref broken" title={`${target}: ${why}`} data-ref={target}>
        {children}
      </span>
    );
  }
  return (
    <button type="button" className="file-ref" data-ref={target} title={`Open ${target}`} onClick={() => onOpen(target)}>
      {children}
    </button>
  );
}
