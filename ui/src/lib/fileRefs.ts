// A remark plugin that turns file references into buttons the app handles:
//   [`src/auth.rs:45`][]   [`src/auth.rs:45-60`][]   [text](src/auth.rs:45)
// The rustdoc form has no link definition, so markdown leaves it as "[", inline code, "][]";
// this plugin finds that pattern. Code blocks are separate nodes and are never touched.
import type { Root, RootContent, PhrasingContent } from "mdast";
import { SKIP, visit } from "unist-util-visit";

const TARGET = /^([^\s`[\]()<>]+?):(\d+)(?:-(\d+))?$/;

export function isReferenceTarget(text: string): boolean {
  return TARGET.test(text) && !text.includes("://");
}

function fileRef(target: string, children: PhrasingContent[]): RootContent {
  return {
    type: "fileRef",
    children,
    data: { hName: "button", hProperties: { className: ["file-ref"], dataRef: target, type: "button" } },
  } as unknown as RootContent;
}

export function remarkFileRefs() {
  return (tree: Root) => {
    visit(tree, (node, index, parent) => {
      if (!parent || index === undefined) return;
      if (node.type === "link" && isReferenceTarget(node.url)) {
        parent.children[index] = fileRef(node.url, node.children) as never;
        return SKIP;
      }
      if (node.type === "inlineCode" && isReferenceTarget(node.value)) {
        const before = parent.children[index - 1];
        const after = parent.children[index + 1];
        if (before?.type === "text" && before.value.endsWith("[") && after?.type === "text" && after.value.startsWith("][]")) {
          before.value = before.value.slice(0, -1);
          after.value = after.value.slice(3);
          parent.children[index] = fileRef(node.value, [node]) as never;
          return SKIP;
        }
      }
    });
  };
}
