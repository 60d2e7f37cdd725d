import { describe, expect, it } from "vitest";
import { render, screen, waitFor, within } from "../../test/render";
import userEvent from "@testing-library/user-event";
import type { Permission } from "../../bindings";
import { SettingsProvider } from "../../lib/settings";
import { calls, onCommand } from "../../test/tauri";
import { healthyApp } from "../../test/fixtures";
import { PermissionsSettings } from "./PermissionsSettings";

const GIVEN: Permission[] = [
  { id: "rule:allow:demo:add", kind: "tool_rule", label: "allow demo:add", scope: "every conversation", created_at: null },
  { id: "grant:c1:web:fetch", kind: "conversation_grant", label: "allow web:fetch", scope: 'the conversation "Kestrels"', created_at: 2 },
  { id: "command:abcd", kind: "terminal_command", label: "git diff --stat", scope: "in /home/u/app", created_at: 3 },
  { id: "folder:c2", kind: "conversation_folder", label: "commands may change files in /home/u/site", scope: 'the conversation "Site"', created_at: null },
];

function setup() {
  healthyApp();
  let given = [...GIVEN];
  onCommand("permissions_list", () => given);
  onCommand("permissions_revoke", ({ id }) => {
    const found = given.find((p) => p.id === id);
    if (!found) throw { kind: "not_found", message: `there is no permission "${String(id)}"` };
    given = given.filter((p) => p.id !== id);
    return found;
  });
  onCommand("permissions_add_rule", ({ pattern, decision }) => {
    const p: Permission = { id: `rule:${String(decision)}:${String(pattern)}`, kind: "tool_rule", label: `${String(decision)} ${String(pattern)}`, scope: "every conversation", created_at: null };
    given = [...given, p];
    return p;
  });
  render(
    <SettingsProvider>
      <PermissionsSettings />
    </SettingsProvider>,
  );
}

describe("PermissionsSettings", () => {
  it("lists every kind of permission under its heading, and revokes one", async () => {
    setup();
    const commandsList = await screen.findByRole("list", { name: "Commands always allowed" });
    await waitFor(() => expect(commandsList).toHaveTextContent("git diff --stat"));
    expect(commandsList).toHaveTextContent("in /home/u/app");
    expect(screen.getByRole("list", { name: "Tool rules" })).toHaveTextContent("allow demo:add");
    expect(screen.getByRole("list", { name: "Tools allowed in one conversation" })).toHaveTextContent('allow web:fetch the conversation "Kestrels"');
    expect(screen.getByRole("list", { name: "Conversations' own folders" })).toHaveTextContent("/home/u/site");
    expect(screen.getByRole("list", { name: "Terminal sessions" })).toHaveTextContent("None running.");

    await userEvent.click(within(commandsList).getByRole("button", { name: "Revoke git diff --stat" }));
    expect(calls.find((c) => c.cmd === "permissions_revoke")?.args).toEqual({ id: "command:abcd" });
    await waitFor(() => expect(commandsList).toHaveTextContent("None yet."));
    // The settings are read again (rules live there), so no form saves a stale copy.
    expect(calls.filter((c) => c.cmd === "get_settings").length).toBeGreaterThan(1);
  });

  it("adds a tool rule, and shows a refusal in the user's words", async () => {
    setup();
    const rules = await screen.findByRole("list", { name: "Tool rules" });
    await userEvent.type(screen.getByRole("textbox", { name: "Rule pattern" }), "web:*");
    await userEvent.selectOptions(screen.getByRole("combobox", { name: "Rule decision" }), "deny");
    await userEvent.click(screen.getByRole("button", { name: "Add rule" }));
    expect(calls.find((c) => c.cmd === "permissions_add_rule")?.args).toEqual({ pattern: "web:*", decision: "deny" });
    await waitFor(() => expect(rules).toHaveTextContent("deny web:*"));
    expect(screen.getByRole("textbox", { name: "Rule pattern" })).toHaveValue("");

    onCommand("permissions_revoke", () => {
      throw { kind: "not_found", message: 'there is no permission "rule:allow:demo:add" (list them with `perch permissions list`)' };
    });
    await userEvent.click(within(rules).getByRole("button", { name: "Revoke allow demo:add" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("there is no permission");
  });
});
