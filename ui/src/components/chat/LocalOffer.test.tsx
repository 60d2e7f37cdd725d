import { describe, expect, it, vi } from "vitest";
import { render, screen, waitFor } from "../../test/render";
import userEvent from "@testing-library/user-event";
import { LocalOffer } from "./LocalOffer";
import { MODELS_CHANGED } from "../../lib/localModels";
import { onCommand } from "../../test/tauri";
import { healthyApp, localOverview } from "../../test/fixtures";

describe("the first-run offer of a local model", () => {
  it("offers the smallest catalogue model and tells the model pickers when it arrived", async () => {
    healthyApp();
    onCommand("local_model_download", (args) => {
      (args.progress as { onmessage: (p: { done: number; total: number }) => void }).onmessage({ done: 1, total: 2 });
      return { name: args.id };
    });
    const changed = vi.fn();
    window.addEventListener(MODELS_CHANGED, changed);
    render(<LocalOffer />);
    const offer = await screen.findByRole("region", { name: "Chat on this computer" });
    expect(offer).toHaveTextContent("Qwen3 0.6B (639 MB, about 1.1 GB of memory)");
    await userEvent.click(screen.getByRole("button", { name: "Download Qwen3 0.6B" }));
    await waitFor(() => expect(changed).toHaveBeenCalledTimes(1));
    window.removeEventListener(MODELS_CHANGED, changed);
  });

  it("shows why a download failed and lets it be tried again", async () => {
    healthyApp();
    onCommand("local_model_download", () => {
      throw { kind: "external", message: "huggingface.co could not be reached" };
    });
    render(<LocalOffer />);
    await userEvent.click(await screen.findByRole("button", { name: "Download Qwen3 0.6B" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("huggingface.co could not be reached");
    expect(screen.getByRole("button", { name: "Download Qwen3 0.6B" })).toBeEnabled();
  });

  it("offers to resume a download that was cut short", async () => {
    healthyApp();
    const base = localOverview();
    onCommand("local_overview", () => ({ ...base, catalog: [{ ...base.catalog[0], partial: 100_000_000 }] }));
    render(<LocalOffer />);
    expect(await screen.findByRole("button", { name: "Resume download (100 MB here)" })).toBeInTheDocument();
  });
});
