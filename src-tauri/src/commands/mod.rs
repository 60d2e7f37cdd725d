//! Commands the UI may call: a few lines each, parse -> engine -> map the error.

pub mod app;
pub mod apps;
pub mod capture;
pub mod chat;
pub mod desktop;
pub mod files;
pub mod google;
pub mod history;
pub mod knowledge;
pub mod local;
pub mod logs;
pub mod memories;
pub mod models;
pub mod permissions;
pub mod review;
pub mod speech;
pub mod terminal;
pub mod tools;
pub mod update;
pub mod voice;
pub mod window;

use perch_core::agent::picker::DownloadProgress;
use tauri::ipc::Channel;

/// Forwards a download's progress to the UI's channel, about once a megabyte (plenty for a
/// progress bar), always the last update, and again when a resumed download starts over.
pub(crate) fn progress_sender(channel: Channel<DownloadProgress>) -> impl FnMut(u64, u64) + Send {
    let mut last = 0u64;
    move |done, total| {
        if done == total || done >= last + (1 << 20) || done < last {
            last = done;
            let _ = channel.send(DownloadProgress { done, total });
        }
    }
}
