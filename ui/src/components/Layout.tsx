import { lazy, Suspense } from "react";
import { Route, Routes, useLocation } from "react-router";
import { useLingui } from "@lingui/react/macro";
import type { AppStatus } from "../bindings";
import { ChatPage } from "../pages/ChatPage";
import { Announcer } from "./Announcer";
import { ErrorBoundary } from "./ErrorBoundary";
import { FailureNotices, Notices } from "./Notices";
import { ShortcutSheet } from "./ShortcutSheet";
import { UpdateNotice } from "./settings/UpdatesCard";
import { TitleBar } from "./TitleBar";

// The chat is what a launch shows; the other pages load when first opened, so the page that
// waits all day beside the editor has not parsed them (issue 16, figures in ARCHITECTURE.md).
const HistoryPage = lazy(() => import("../pages/HistoryPage").then((m) => ({ default: m.HistoryPage })));
const ReviewPage = lazy(() => import("../pages/ReviewPage").then((m) => ({ default: m.ReviewPage })));
const SettingsPage = lazy(() => import("../pages/SettingsPage").then((m) => ({ default: m.SettingsPage })));

export function Layout({ status, tray = true }: { status: AppStatus; tray?: boolean }) {
  const { t } = useLingui();
  // A page that failed to render is tried afresh when the user moves to another (a reset, not
  // a remount: the chat keeps its answer when its address changes from / to /chat/<id>).
  const { pathname } = useLocation();
  return (
    <div className="shell">
      <TitleBar tray={tray} />
      <Notices notices={status.notices} />
      <FailureNotices />
      {/* Settings shows the update itself. */}
      {pathname !== "/settings" && <UpdateNotice />}
      <main className="page">
        <ErrorBoundary resetOn={pathname} title={t`This page stopped working`}>
          <Suspense fallback={null}>
            <Routes>
              <Route path="/" element={<ChatPage />} />
              <Route path="/chat/:id" element={<ChatPage />} />
              <Route path="/history" element={<HistoryPage />} />
              <Route path="/review" element={<ReviewPage />} />
              <Route path="/settings" element={<SettingsPage status={status} />} />
            </Routes>
          </Suspense>
        </ErrorBoundary>
      </main>
      <ShortcutSheet />
      <Announcer />
    </div>
  );
}
