// Splits streaming markdown into blocks at blank lines outside code fences, so finished
// blocks render once and only the growing last block re-renders while tokens arrive.

export function splitBlocks(text: string): string[] {
  const blocks: string[] = [];
  let current: string[] = [];
  let fence: string | null = null;
  for (const line of text.split("\n")) {
    const marker = line.trimStart().match(/^(```|~~~)/)?.[1] ?? null;
    if (fence === null && marker) fence = marker;
    else if (fence !== null && marker === fence) fence = null;
    if (fence === null && line.trim() === "" && current.length > 0) {
      blocks.push(current.join("\n"));
      current = [];
      continue;
    }
    current.push(line);
  }
  if (current.length > 0) blocks.push(current.join("\n"));
  return blocks;
}
