import { Route, Routes, useLocation } from "react-router";
import type { AppStatus } from "../bindings";
import { ChatPage } from "../pages/ChatPage";
import { HistoryPage } from "../pages/HistoryPage";
import { ReviewPage } from "../pages/ReviewPage";
import { SettingsPage } from "../pages/SettingsPage";
import { ErrorBoundary } from "./ErrorBoundary";
import { FailureNotices, Notices } from "./Notices";
import { TitleBar } from "./TitleBar";

export function Layout({ status }: { status: AppStatus }) {
  // A page that failed to render is tried afresh when the user moves to another (a reset, not
  // a remount: the chat keeps its answer when its address changes from / to /chat/<id>).
  const { pathname } = useLocation();
  return (
    <div className="shell">
      <TitleBar />
      <Notices notices={status.notices} />
      <FailureNotices />
      <main className="page">
        <ErrorBoundary resetOn={pathname} what="This page">
          <Routes>
            <Route path="/" element={<ChatPage />} />
            <Route path="/chat/:id" element={<ChatPage />} />
            <Route path="/history" element={<HistoryPage />} />
            <Route path="/review" element={<ReviewPage />} />
            <Route path="/settings" element={<SettingsPage status={status} />} />
          </Routes>
        </ErrorBoundary>
      </main>
    </div>
  );
}
