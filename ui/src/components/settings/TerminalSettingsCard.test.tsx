import { describe, expect, it } from "vitest";
import { render, screen, waitFor } from "../../test/render";
import userEvent from "@testing-library/user-event";
import { SettingsProvider } from "../../lib/settings";
import { SETTINGS } from "../../test/fixtures";
import { calls, onCommand } from "../../test/tauri";
import { TerminalSettingsCard } from "./TerminalSettingsCard";

describe("TerminalSettingsCard", () => {
  it("saves the ask level and shows the sandbox", async () => {
    onCommand("get_settings", () => SETTINGS);
    onCommand("set_terminal_settings", (args) => ({ ...SETTINGS, terminal: args.terminal }));
    onCommand("terminal_status", () => ({
      sandbox: { enforced: false, network_blocked: false, writable: [], summary: "No sandbox: this kernel has no Landlock." },
    }));
    render(
      <SettingsProvider>
        <TerminalSettingsCard />
      </SettingsProvider>,
    );
    expect(await screen.findByRole("status", { name: "Sandbox" })).toHaveTextContent("this kernel has no Landlock");
    await userEvent.selectOptions(screen.getByRole("combobox", { name: "Ask level" }), "always");
    await waitFor(() => expect(calls.find((c) => c.cmd === "set_terminal_settings")?.args.terminal).toMatchObject({ ask_level: "always" }));
    // The edit goes with the copy it was made from, so the engine keeps what changed elsewhere.
    expect(calls.find((c) => c.cmd === "set_terminal_settings")?.args.base).toMatchObject({ ask_level: SETTINGS.terminal.ask_level });
    expect(screen.getByText(/Commands you always allow.*Settings → Permissions/)).toBeInTheDocument();
  });

  it("saves the variables passed to commands beside the other settings", async () => {
    onCommand("get_settings", () => SETTINGS);
    onCommand("set_terminal_settings", (args) => ({ ...SETTINGS, terminal: args.terminal }));
    onCommand("terminal_status", () => ({ sandbox: { enforced: true, network_blocked: false, writable: [], summary: "Sandboxed" } }));
    render(
      <SettingsProvider>
        <TerminalSettingsCard />
      </SettingsProvider>,
    );
    const field = await screen.findByRole("textbox", { name: "Variables passed to commands" });
    await userEvent.type(field, "CARGO_HOME{Enter}RUSTUP_HOME");
    await userEvent.tab();
    await waitFor(() =>
      expect(calls.find((c) => c.cmd === "set_terminal_settings")?.args.terminal).toMatchObject({
        pass_env: ["CARGO_HOME", "RUSTUP_HOME"],
        ask_level: "on_miss",
      }),
    );
  });
});
