import { Route, Routes } from "react-router";
import type { AppStatus } from "../bindings";
import { ChatPage } from "../pages/ChatPage";
import { HistoryPage } from "../pages/HistoryPage";
import { ReviewPage } from "../pages/ReviewPage";
import { SettingsPage } from "../pages/SettingsPage";
import { FailureNotices, Notices } from "./Notices";
import { TitleBar } from "./TitleBar";

export function Layout({ status }: { status: AppStatus }) {
  return (
    <div className="shell">
      <TitleBar />
      <Notices notices={status.notices} />
      <FailureNotices />
      <main className="page">
        <Routes>
          <Route path="/" element={<ChatPage />} />
          <Route path="/chat/:id" element={<ChatPage />} />
          <Route path="/history" element={<HistoryPage />} />
          <Route path="/review" element={<ReviewPage />} />
          <Route path="/settings" element={<SettingsPage status={status} />} />
        </Routes>
      </main>
    </div>
  );
}
