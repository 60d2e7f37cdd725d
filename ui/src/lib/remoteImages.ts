// Images in rendered markdown never load from the network: a remote image in an answer or a
// review could be a tracking pixel, and the CSP's img-src should not be the only thing that
// stops it. A rehype plugin, run before the sanitizer, turns each remote image into a
// placeholder button naming its host (a click opens the link in the system browser); images
// of the app's own (data:image, blob:, the asset protocol, paths inside the app) stay.
import type { Element, Root } from "hast";
import { visit } from "unist-util-visit";

export type ImageSource = { kind: "own" } | { kind: "remote"; url: string; host: string } | { kind: "refused" };

// Tauri serves local files as asset://localhost/... (Linux, macOS) or http://asset.localhost/...
const OWN = /^(data:image\/|blob:|asset:|https?:\/\/asset\.localhost\/)/i;
const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

export function classifyImage(src: string): ImageSource {
  const s = src.trim();
  if (OWN.test(s)) return { kind: "own" };
  // `//host/x.png` takes the page's scheme: remote in a dev server, odd anywhere else.
  const absolute = s.startsWith("//") ? `https:${s}` : s;
  if (/^https?:/i.test(absolute)) {
    try {
      const url = new URL(absolute);
      return { kind: "remote", url: url.href, host: url.host };
    } catch {
      return { kind: "refused" };
    }
  }
  // javascript:, file:, data:text/html... are refused; a scheme-less path stays in the app.
  return SCHEME.test(s) || s === "" ? { kind: "refused" } : { kind: "own" };
}

function altOf(node: Element): string {
  return typeof node.properties.alt === "string" ? node.properties.alt : "";
}

/** The rehype plugin: remote images become `button.remote-image`, refused ones their alt text. */
export function rehypeRemoteImages() {
  return (tree: Root) => {
    visit(tree, "element", (node, index, parent) => {
      if (node.tagName !== "img" || !parent || index === undefined) return;
      const source = classifyImage(String(node.properties.src ?? ""));
      const alt = altOf(node);
      if (source.kind === "remote") {
        parent.children[index] = {
          type: "element",
          tagName: "button",
          properties: { className: ["remote-image"], type: "button", dataHref: source.url, dataHost: source.host },
          children: [{ type: "text", value: alt }],
        };
      } else if (source.kind === "refused") {
        parent.children[index] = { type: "text", value: alt };
      }
    });
  };
}
