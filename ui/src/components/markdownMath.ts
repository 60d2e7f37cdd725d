// KaTeX and its stylesheet, loaded with the first text that may hold math (see Markdown.tsx).
import rehypeKatex from "rehype-katex";
import "katex/dist/katex.min.css";

export { rehypeKatex };
