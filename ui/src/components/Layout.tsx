import { useEffect } from "react";
import { Route, Routes, useNavigate } from "react-router";
import type { AppStatus } from "../bindings";
import { events } from "../ipc";
import { ChatPage } from "../pages/ChatPage";
import { HistoryPage } from "../pages/HistoryPage";
import { ReviewPage } from "../pages/ReviewPage";
import { SettingsPage } from "../pages/SettingsPage";
import { Notices } from "./Notices";
import { TitleBar } from "./TitleBar";

export function Layout({ status }: { status: AppStatus }) {
  const navigate = useNavigate();

  // The tray's "New chat" (and later, other processes) ask for a page.
  useEffect(() => {
    const unlisten = events.navigateRequested.listen((e) => {
      const route = e.payload.route;
      navigate(route === "new_chat" ? "/" : `/${route}`);
    });
    return () => void unlisten.then((off) => off());
  }, [navigate]);

  return (
    <div className="shell">
      <TitleBar />
      <Notices notices={status.notices} />
      <main className="page">
        <Routes>
          <Route path="/" element={<ChatPage />} />
          <Route path="/history" element={<HistoryPage />} />
          <Route path="/review" element={<ReviewPage />} />
          <Route path="/settings" element={<SettingsPage status={status} />} />
        </Routes>
      </main>
    </div>
  );
}
