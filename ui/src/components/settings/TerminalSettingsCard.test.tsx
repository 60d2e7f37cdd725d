import { describe, expect, it } from "vitest";
import { render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { SettingsProvider } from "../../lib/settings";
import { SETTINGS } from "../../test/fixtures";
import { calls, onCommand } from "../../test/tauri";
import { TerminalSettingsCard } from "./TerminalSettingsCard";

describe("TerminalSettingsCard", () => {
  it("saves the ask level, shows the sandbox and revokes remembered approvals", async () => {
    let remembered = [
      { hash: "a".repeat(64), label: "cargo test -p", created_at: 1 },
      { hash: "b".repeat(64), label: "git status", created_at: 2 },
    ];
    onCommand("get_settings", () => SETTINGS);
    onCommand("set_terminal_settings", (args) => ({ ...SETTINGS, terminal: args.terminal }));
    onCommand("terminal_status", () => ({
      sandbox: { enforced: false, network_blocked: false, writable: [], summary: "No sandbox: this kernel has no Landlock." },
      remembered,
    }));
    onCommand("terminal_revoke", (args) => {
      remembered = remembered.filter((r) => r.hash !== args.hash);
      return 1;
    });
    render(
      <SettingsProvider>
        <TerminalSettingsCard />
      </SettingsProvider>,
    );
    expect(await screen.findByRole("status", { name: "Sandbox" })).toHaveTextContent("this kernel has no Landlock");
    await userEvent.selectOptions(screen.getByRole("combobox", { name: "Ask level" }), "always");
    await waitFor(() => expect(calls.find((c) => c.cmd === "set_terminal_settings")?.args.terminal).toMatchObject({ ask_level: "always" }));
    const list = screen.getByRole("list", { name: "Always allowed commands" });
    expect(list).toHaveTextContent("cargo test -p");
    await userEvent.click(screen.getAllByRole("button", { name: "Revoke" })[0]);
    expect(calls.find((c) => c.cmd === "terminal_revoke")?.args).toEqual({ hash: "a".repeat(64) });
    await waitFor(() => expect(list).not.toHaveTextContent("cargo test -p"));
    expect(list).toHaveTextContent("git status");
  });

  it("saves the variables passed to commands beside the other settings", async () => {
    onCommand("get_settings", () => SETTINGS);
    onCommand("set_terminal_settings", (args) => ({ ...SETTINGS, terminal: args.terminal }));
    onCommand("terminal_status", () => ({ sandbox: { enforced: true, network_blocked: false, writable: [], summary: "Sandboxed" }, remembered: [] }));
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
