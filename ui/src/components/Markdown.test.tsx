import { describe, expect, it, vi } from "vitest";
import { fireEvent, render, screen, waitFor } from "../test/render";
import { Markdown } from "./Markdown";
import type { FileReference } from "../bindings";
import { calls, onCommand } from "../test/tauri";

function ref(target: string, problem: string | null = null): FileReference {
  const [path, lines] = target.split(":");
  const [line, end] = lines.split("-").map(Number);
  return { target, path, line, end_line: end ?? null, problem };
}

describe("Markdown", () => {
  it("renders GitHub-flavoured markdown", () => {
    const { container } = render(
      <Markdown markdown={"| a | b |\n|---|---|\n| 1 | 2 |\n\n- [x] done\n\n~~gone~~"} />,
    );
    expect(container.querySelector("table td")).toHaveTextContent("1");
    expect(container.querySelector('input[type="checkbox"]')).toBeChecked();
    expect(container.querySelector("del")).toHaveTextContent("gone");
  });

  it("turns the three reference forms into buttons that open the file", () => {
    const onOpen = vi.fn();
    const refs = new Map([ref("src/auth.rs:45"), ref("src/auth.rs:45-60"), ref("lib/x.ts:3")].map((r) => [r.target, r]));
    render(
      <Markdown
        markdown={"See [`src/auth.rs:45`][], [`src/auth.rs:45-60`][] and [the helper](lib/x.ts:3)."}
        references={refs}
        onOpenReference={onOpen}
      />,
    );
    const buttons = screen.getAllByRole("button");
    expect(buttons.map((b) => b.textContent)).toEqual(["src/auth.rs:45", "src/auth.rs:45-60", "the helper"]);
    fireEvent.click(buttons[1]);
    fireEvent.click(buttons[2]);
    expect(onOpen.mock.calls).toEqual([["src/auth.rs:45-60"], ["lib/x.ts:3"]]);
    expect(screen.getByText(/See/).textContent).toBe("See src/auth.rs:45, src/auth.rs:45-60 and the helper.");
  });

  it("shows broken and unchecked references as broken, never as buttons", () => {
    const refs = new Map([["../secret:1", ref("../secret:1", "../secret is outside the review's folder")]]);
    const { container } = render(
      <Markdown markdown={"[`../secret:1`][] and [`unknown.rs:2`][]"} references={refs} onOpenReference={vi.fn()} />,
    );
    expect(screen.queryAllByRole("button")).toHaveLength(0);
    const broken = container.querySelectorAll(".file-ref.broken");
    expect(broken).toHaveLength(2);
    expect(broken[0]).toHaveAttribute("title", expect.stringContaining("outside"));
  });

  it("leaves references inside code alone", () => {
    const { container } = render(
      <Markdown markdown={"```\n[`src/a.rs:1`][]\n```"} references={new Map([["src/a.rs:1", ref("src/a.rs:1")]])} onOpenReference={vi.fn()} />,
    );
    expect(container.querySelector("pre code")).toHaveTextContent("[`src/a.rs:1`][]");
    expect(container.querySelectorAll(".file-ref")).toHaveLength(0);
  });

  it("highlights code, renders math, and offers to copy code", async () => {
    const { container } = render(<Markdown markdown={"```rust\nfn main() {}\n```\n\nEuler: $e^{i\\pi} + 1 = 0$"} />);
    expect(container.querySelector("pre code.hljs .hljs-keyword")).toHaveTextContent("fn");
    // KaTeX loads with the first text holding a `$`; until then the formula shows as its source.
    await waitFor(() => expect(container.querySelector(".katex")).not.toBeNull());
    expect(container.querySelector(".katex-mathml annotation")).toHaveTextContent("e^{i\\pi} + 1 = 0");
    expect(screen.getByRole("button", { name: "Copy code" })).toBeInTheDocument();
  });

  it("opens web links through the app and shows refused ones as text marked removed", () => {
    onCommand("open_url", () => null);
    const { container } = render(
      <Markdown markdown={"[docs](https://example.com/x), [evil](javascript:alert(1)) and [page](other.html)"} />,
    );
    fireEvent.click(screen.getByText("docs"));
    expect(calls).toEqual([{ cmd: "open_url", args: { url: "https://example.com/x" } }]);
    expect(container.querySelectorAll("a")).toHaveLength(1);
    for (const text of ["evil", "page"]) {
      const refused = screen.getByText(text);
      expect(refused.tagName).toBe("SPAN");
      expect(refused).toHaveClass("link-removed");
      expect(refused).toHaveTextContent(`${text}link removed`);
      fireEvent.click(refused);
    }
    expect(screen.getByText("page")).toHaveAttribute("title", "Link removed: other.html");
    expect(calls).toHaveLength(1);
  });

  it("keeps footnote links working inside the text", () => {
    const { container } = render(<Markdown markdown={"A claim.[^1]\n\n[^1]: The source."} />);
    const link = container.querySelector("sup a") as HTMLAnchorElement;
    expect(link.getAttribute("href")).toMatch(/^#user-content-fn-1$/);
    expect(container.querySelector(".link-removed")).toBeNull();
  });

  it("never loads a remote image: a placeholder names its host and opens it in the browser", () => {
    onCommand("open_url", () => null);
    const { container } = render(
      <Markdown
        markdown={"Look: ![pixel](http://tracker.example:8080/p.png?u=1) and ![](//cdn.example/x.gif) and ![logo](HTTPS://Img.Example/l.png)"}
      />,
    );
    expect(container.querySelectorAll("img")).toHaveLength(0);
    const placeholders = Array.from(container.querySelectorAll("button.remote-image"));
    expect(placeholders.map((p) => p.textContent)).toEqual([
      "pixel · image from tracker.example:8080",
      "image from cdn.example",
      "logo · image from img.example",
    ]);
    fireEvent.click(placeholders[0]);
    fireEvent.click(placeholders[1]);
    expect(calls).toEqual([
      { cmd: "open_url", args: { url: "http://tracker.example:8080/p.png?u=1" } },
      { cmd: "open_url", args: { url: "https://cdn.example/x.gif" } },
    ]);
  });

  it("opens only the image when a remote image inside a link (a badge) is clicked", () => {
    onCommand("open_url", () => null);
    const { container } = render(<Markdown markdown={"[![CI](https://ci.example/badge.svg)](https://ci.example/runs)"} />);
    fireEvent.click(container.querySelector("button.remote-image")!);
    expect(calls).toEqual([{ cmd: "open_url", args: { url: "https://ci.example/badge.svg" } }]);
    fireEvent.click(screen.getByRole("link"));
    expect(calls.at(-1)).toEqual({ cmd: "open_url", args: { url: "https://ci.example/runs" } });
  });

  it("shows the app's own images, and drops images it cannot show as their text", () => {
    const pixel = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==";
    const { container } = render(
      <Markdown
        markdown={`![chart](${pixel}) ![file](asset://localhost/%2Fhome%2Fme%2Fa.png) ![icon](/perch.png) ![bad](javascript:alert(1)) ![page](data:text/html,hi)`}
      />,
    );
    const images = Array.from(container.querySelectorAll("img"));
    expect(images.map((i) => [i.getAttribute("alt"), i.getAttribute("src")?.slice(0, 22)])).toEqual([
      ["chart", pixel.slice(0, 22)],
      ["file", "asset://localhost/%2Fh"],
      ["icon", "/perch.png"],
    ]);
    expect(container.querySelector("button.remote-image")).toBeNull();
    expect(container.textContent).toContain("bad");
    expect(container.textContent).toContain("page");
  });

  it("renders hostile markdown inert", () => {
    const hostile = [
      "<script>window.pwned = 1</script>",
      '<img src="x" onerror="window.pwned = 2">',
      '<iframe src="https://evil.example"></iframe>',
      '<svg onload="window.pwned = 3"><script>window.pwned = 4</script></svg>',
      '<a href="javascript:window.pwned = 5">click</a>',
      "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
      '<div style="background:url(javascript:alert(1))" onclick="alert(1)">x</div>',
      "![img](javascript:alert(1))",
      '<form action="https://evil.example"><input name="q"></form>',
    ].join("\n\n");
    const { container } = render(<Markdown markdown={hostile} />);
    for (const tag of ["script", "iframe", "svg", "form", "input", "object", "embed", "style"]) {
      expect(container.querySelector(tag), tag).toBeNull();
    }
    for (const el of Array.from(container.querySelectorAll("*"))) {
      for (const attr of Array.from(el.attributes)) {
        expect(attr.name.startsWith("on"), `${el.tagName} ${attr.name}`).toBe(false);
        expect(attr.value.toLowerCase()).not.toContain("javascript:");
        expect(attr.value.toLowerCase()).not.toContain("data:text/html");
      }
    }
    expect((window as unknown as { pwned?: number }).pwned).toBeUndefined();
  });
});
