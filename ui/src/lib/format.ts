/** A size for people: "512 bytes", "48.3 KB", "5.0 MB", "1.2 GB" (decimal units, as files
 * managers show them). */
export function formatBytes(bytes: number): string {
  if (bytes < 1e3) return `${bytes} bytes`;
  if (bytes < 1e6) return `${(bytes / 1e3).toFixed(1)} KB`;
  if (bytes < 1e9) return `${(bytes / 1e6).toFixed(1)} MB`;
  return `${(bytes / 1e9).toFixed(1)} GB`;
}
