import { describe, expect, it } from "vitest";
import { render, screen, within } from "../../test/render";
import userEvent from "@testing-library/user-event";
import type { GoogleService, GoogleStatus } from "../../bindings";
import { calls, onCommand } from "../../test/tauri";
import { ConnectionsSettings } from "./ConnectionsSettings";

const LABELS: Record<GoogleService, string> = {
  mail_read: "Read mail",
  mail_send: "Write mail",
  mail_organize: "Organise mail",
  calendar_read: "See calendar",
  calendar_write: "Change calendar",
};

function status(over: Partial<GoogleStatus> = {}, granted: GoogleService[] = []): GoogleStatus {
  return {
    client_id: null,
    has_client_secret: false,
    connected: false,
    account: null,
    services: (Object.keys(LABELS) as GoogleService[]).map((service) => ({
      service,
      label: LABELS[service],
      description: `What ${LABELS[service]} allows.`,
      granted: granted.includes(service),
    })),
    expires_at: null,
    problem: null,
    connecting_page: null,
    ...over,
  };
}

describe("ConnectionsSettings", () => {
  it("walks a new user from the client to connecting with the services they tick", async () => {
    let current = status();
    onCommand("google_status", () => current);
    onCommand("google_set_client", () => {
      current = status({ client_id: "123-abc.apps.googleusercontent.com", has_client_secret: true });
      return current;
    });
    render(<ConnectionsSettings />);
    const card = await screen.findByRole("group", { name: "Google" });
    expect(within(card).getByText(/OAuth client ID, choose/i, { selector: "li" })).toHaveTextContent("Desktop app");

    await userEvent.type(within(card).getByLabelText("Client ID"), "123-abc.apps.googleusercontent.com");
    await userEvent.type(within(card).getByLabelText("Client secret"), "GOCSPX-s");
    await userEvent.click(within(card).getByRole("button", { name: "Save client" }));
    expect(calls.find((c) => c.cmd === "google_set_client")?.args).toEqual({
      clientId: "123-abc.apps.googleusercontent.com",
      clientSecret: "GOCSPX-s",
      file: null,
    });

    // Reading is ticked first; the user adds changing the calendar.
    const read = await within(card).findByRole("checkbox", { name: /^Read mail/ });
    expect(read).toBeChecked();
    expect(within(card).getByRole("checkbox", { name: /^Write mail/ })).not.toBeChecked();
    await userEvent.click(within(card).getByRole("checkbox", { name: /^Change calendar/ }));
    let finish: (value: GoogleStatus) => void = () => {};
    onCommand("google_connect", () => new Promise<GoogleStatus>((resolve) => (finish = resolve)));
    await userEvent.click(within(card).getByRole("button", { name: "Connect Google" }));
    expect(calls.find((c) => c.cmd === "google_connect")?.args).toEqual({
      services: ["mail_read", "calendar_read", "calendar_write"],
    });
    const waiting = await within(card).findByRole("status", { name: "Connecting to Google" });
    expect(waiting).toHaveTextContent("Opening your browser");
    // Once Google's address is known it is shown to open by hand, with what an error page means.
    current = { ...current, connecting_page: "https://accounts.google.com/o/oauth2/v2/auth?client_id=x" };
    await within(waiting).findByRole("button", { name: "Copy address" });
    expect(waiting).toHaveTextContent("accounts.google.com/o/oauth2/v2/auth");
    expect(waiting).toHaveTextContent("not a Desktop app");
    current = status(
      { client_id: "123-abc.apps.googleusercontent.com", connected: true, account: "ada@example.com", problem: "Google did not grant: Change calendar." },
      ["mail_read", "calendar_read"],
    );
    finish(current);
    expect(await within(card).findByText("ada@example.com")).toBeInTheDocument();
    expect(within(card).getByText(/did not grant: Change calendar/)).toBeInTheDocument();
    expect(within(card).getByRole("button", { name: "Disconnect" })).toBeInTheDocument();
  });

  it("shows why a client was refused and keeps what was typed", async () => {
    onCommand("google_status", () => status());
    onCommand("google_set_client", () => {
      throw { kind: "invalid", message: "\"my-key\" is not a Google OAuth client ID" };
    });
    render(<ConnectionsSettings />);
    const card = await screen.findByRole("group", { name: "Google" });
    await userEvent.type(within(card).getByLabelText("Client ID"), "my-key");
    await userEvent.click(within(card).getByRole("button", { name: "Save client" }));
    expect(await within(card).findByRole("alert")).toHaveTextContent("is not a Google OAuth client ID");
    expect(within(card).getByLabelText("Client ID")).toHaveValue("my-key");
  });

  it("keeps granted services ticked and asks Google only for the ones added", async () => {
    onCommand("google_status", () =>
      status({ client_id: "x.apps.googleusercontent.com", connected: true, account: "ada@example.com" }, ["mail_read"]),
    );
    onCommand("google_connect", () => status());
    render(<ConnectionsSettings />);
    const card = await screen.findByRole("group", { name: "Google" });
    const read = await within(card).findByRole("checkbox", { name: /^Read mail/ });
    expect(read).toBeChecked();
    expect(read).toBeDisabled();
    expect(within(card).getByRole("button", { name: "Update access" })).toBeDisabled();
    await userEvent.click(within(card).getByRole("checkbox", { name: /^See calendar/ }));
    await userEvent.click(within(card).getByRole("button", { name: "Update access" }));
    expect(calls.find((c) => c.cmd === "google_connect")?.args).toEqual({ services: ["calendar_read"] });
  });

  it("disconnects", async () => {
    onCommand("google_status", () =>
      status({ client_id: "x.apps.googleusercontent.com", connected: true, account: "ada@example.com" }, ["mail_read"]),
    );
    onCommand("google_disconnect", () => true);
    render(<ConnectionsSettings />);
    const card = await screen.findByRole("group", { name: "Google" });
    await userEvent.click(await within(card).findByRole("button", { name: "Disconnect" }));
    expect(calls.find((c) => c.cmd === "google_disconnect")?.args).toEqual({ forgetClient: false });
  });
});
