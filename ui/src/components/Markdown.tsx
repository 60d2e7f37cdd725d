// The one markdown renderer (reviews now, chat next): GitHub-flavoured, sanitized, raw HTML
// never rendered, links opened by the app in the system browser and never by navigation, and
// file references turned into buttons that ask the engine to open the file.
import { memo, type MouseEvent, type ReactNode } from "react";
import ReactMarkdown, { type Components } from "react-markdown";
import rehypeSanitize, { defaultSchema } from "rehype-sanitize";
import remarkGfm from "remark-gfm";
import type { FileReference } from "../bindings";
import { commands } from "../ipc";
import { remarkFileRefs } from "../lib/fileRefs";

const schema = {
  ...defaultSchema,
  tagNames: [...(defaultSchema.tagNames ?? []), "button"],
  attributes: {
    ...defaultSchema.attributes,
    button: [["className", "file-ref"], "dataRef", ["type", "button"]],
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
        remarkPlugins={[remarkGfm, remarkFileRefs]}
        rehypePlugins={[[rehypeSanitize, schema]]}
        components={components}
      >
        {markdown}
      </ReactMarkdown>
    </div>
  );
});

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
