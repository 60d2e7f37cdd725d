// The one markdown renderer (chat answers and reviews): GitHub-flavoured, sanitized, raw HTML
// never rendered, links opened by the app in the system browser and never by navigation,
// remote images shown as placeholders and never loaded, and file references turned into
// buttons that ask the engine to open the file.
import { memo, useEffect, useRef, useState, type ComponentProps, type MouseEvent, type ReactNode } from "react";
import { Trans, useLingui } from "@lingui/react/macro";
import ReactMarkdown, { defaultUrlTransform, type Components, type Options, type UrlTransform } from "react-markdown";
import rehypeHighlight from "rehype-highlight";
import rehypeSanitize, { defaultSchema } from "rehype-sanitize";
import remarkGfm from "remark-gfm";
import remarkMath from "remark-math";
import type { FileReference } from "../bindings";
import { commands } from "../ipc";
import { attempt } from "../lib/failures";
import { ImageIcon } from "./Icons";
import { remarkFileRefs } from "../lib/fileRefs";
import { classifyImage, rehypeRemoteImages } from "../lib/remoteImages";

// Remote images become placeholders first; sanitizing runs next, on what the markdown
// produced; KaTeX and highlighting run after it and only add their own markup. Math arrives
// as code with math classes, which must survive.
const schema = {
  ...defaultSchema,
  tagNames: [...(defaultSchema.tagNames ?? []), "button"],
  attributes: {
    ...defaultSchema.attributes,
    button: [["className", "file-ref", "remote-image"], "dataRef", "dataHref", "dataHost", ["type", "button"]],
    code: [["className", /^language-./, "math-inline", "math-display"]],
  },
  // The app's own images; http(s) ones were made placeholders before this runs.
  protocols: { ...defaultSchema.protocols, src: ["http", "https", "data", "blob", "asset"] },
};

const WEB_LINK = /^(https?:|mailto:)/i;

// KaTeX is two thirds of the renderer's code. It loads with the first text holding a `$`
// (remark-math, which is small, always parses math, so until KaTeX arrives a formula shows as
// its source); a page that never sees math never parses KaTeX (issue 16).
type Katex = NonNullable<Options["rehypePlugins"]>[number];
let katex: Katex | null = null;
let katexLoading: Promise<Katex> | null = null;

function useKatex(needed: boolean): Katex | null {
  // A plugin is a function: both state updates wrap it so React stores it instead of calling it.
  const [plugin, setPlugin] = useState<Katex | null>(() => katex);
  useEffect(() => {
    if (!needed || plugin) return;
    let live = true;
    katexLoading ??= import("./markdownMath").then((m) => (katex = m.rehypeKatex));
    katexLoading.then(
      (p) => live && setPlugin(() => p),
      () => {
        katexLoading = null; // formulas stay as their source; the next text tries again
      },
    );
    return () => {
      live = false;
    };
  }, [needed, plugin]);
  return plugin;
}

// react-markdown's default keeps only web and relative URLs; images of the app's own (data:,
// blob:, asset:) may stay too. Remote images never get here (see rehypeRemoteImages).
const urlTransform: UrlTransform = (url, key, node) =>
  node.tagName === "img" && key === "src" && classifyImage(url).kind === "own" ? url : defaultUrlTransform(url);

interface Props {
  markdown: string;
  /** Checked references by target; a reference missing here is shown as broken. */
  references?: Map<string, FileReference>;
  onOpenReference?: (target: string) => void;
}

export const Markdown = memo(function Markdown({ markdown, references, onOpenReference }: Props) {
  const math = useKatex(markdown.includes("$"));
  const components: Components = {
    a: ({ href, children }) => <WebLink href={href}>{children}</WebLink>,
    // The placeholders stopped remote images; this stops anything they missed.
    img: ({ src, alt }) => (typeof src === "string" && classifyImage(src).kind === "own" ? <img src={src} alt={alt ?? ""} /> : null),
    pre: (props) => <CodeBlock {...props} />,
    button: (props) => {
      const data = props as Record<string, unknown>;
      if (typeof data["data-href"] === "string") {
        const alt = typeof props.children === "string" ? props.children : "";
        return <RemoteImage url={data["data-href"]} host={String(data["data-host"] ?? "")} alt={alt} />;
      }
      const target = String(data["data-ref"] ?? "");
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
        rehypePlugins={[
          rehypeRemoteImages,
          [rehypeSanitize, schema],
          ...(math ? [math] : []),
          [rehypeHighlight, { detect: false }],
        ]}
        components={components}
        urlTransform={urlTransform}
      >
        {markdown}
      </ReactMarkdown>
    </div>
  );
});

/** A fenced code block with a copy button. */
function CodeBlock({ children, node, ...rest }: ComponentProps<"pre"> & { node?: unknown }) {
  const { t } = useLingui();
  const pre = useRef<HTMLPreElement>(null);
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard?.writeText(pre.current?.textContent ?? "");
    setCopied(true);
    setTimeout(() => setCopied(false), 1200);
  };
  return (
    <div className="code-block">
      <button type="button" className="copy-code" aria-label={t`Copy code`} onClick={() => void copy()}>
        {copied ? t`Copied` : t`Copy`}
      </button>
      <pre ref={pre} {...rest}>
        {children}
      </pre>
    </div>
  );
}

/** A link: web links open in the system browser, `#` links scroll to their footnote, and any
 * other link (javascript:, file paths, relative pages) is shown as text marked as removed. */
function WebLink({ href, children }: { href?: string; children: ReactNode }) {
  const { t } = useLingui();
  if (href && WEB_LINK.test(href)) {
    const open = (e: MouseEvent) => {
      e.preventDefault();
      void attempt(t`Could not open the link`, commands.openUrl(href));
    };
    return (
      <a href={href} onClick={open} title={href} rel="noreferrer">
        {children}
      </a>
    );
  }
  if (href?.startsWith("#")) {
    const jump = (e: MouseEvent) => {
      e.preventDefault();
      document.getElementById(href.slice(1))?.scrollIntoView({ block: "nearest" });
    };
    return (
      <a href={href} onClick={jump}>
        {children}
      </a>
    );
  }
  return (
    <span className="link-removed" title={href ? t`Link removed: ${href}` : t`Link removed: not a web link`}>
      {children}
      <span className="link-removed-mark">
        <Trans>link removed</Trans>
      </span>
    </span>
  );
}

/** Where a remote image was: its host, and a click to see it in the system browser. */
function RemoteImage({ url, host, alt }: { url: string; host: string; alt: string }) {
  const { t } = useLingui();
  return (
    <button
      type="button"
      className="remote-image"
      title={t`Not loaded: ${url}. Click to open it in your browser.`}
      onClick={(e) => {
        // Inside a link (a badge), only the image opens.
        e.preventDefault();
        e.stopPropagation();
        void attempt(t`Could not open the image in your browser`, commands.openUrl(url));
      }}
    >
      <ImageIcon />
      {alt ? <Trans>{alt} · image from {host}</Trans> : <Trans>image from {host}</Trans>}
    </button>
  );
}

function FileRef(props: {
  target: string;
  reference?: FileReference;
  onOpen?: (target: string) => void;
  children: ReactNode;
}) {
  const { target, reference, onOpen, children } = props;
  const { t } = useLingui();
  if (!reference || reference.problem || !onOpen) {
    // The engine's reason, or ours when it was not asked.
    const why = reference?.problem ?? t`This reference was not checked.`;
    const what = target;
    const title = t({
      message: `${what}: ${why}`,
      comment: "a thing, then what is wrong with it (a file, a reference or a failed action, and the reason)",
    });
    return (
      <span className="file-ref broken" title={title} data-ref={target}>
        {children}
      </span>
    );
  }
  return (
    <button type="button" className="file-ref" data-ref={target} title={t`Open ${target}`} onClick={() => onOpen(target)}>
      {children}
    </button>
  );
}
