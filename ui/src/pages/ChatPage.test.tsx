import { beforeEach, describe, expect, it } from "vitest";
import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { ChatPage } from "./ChatPage";

describe("ChatPage", () => {
  beforeEach(() => localStorage.clear());

  it("keeps the draft across a remount, so nothing typed is lost", async () => {
    const first = render(<ChatPage />);
    await userEvent.type(screen.getByRole("textbox", { name: "Message" }), "half a thought");
    first.unmount();
    render(<ChatPage />);
    expect(screen.getByRole("textbox", { name: "Message" })).toHaveValue("half a thought");
  });
});
