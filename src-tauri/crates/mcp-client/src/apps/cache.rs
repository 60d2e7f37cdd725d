//! Pages already read, so a card's app opens without asking its server again: keyed by the
//! server, what it says it is (name and version) and the connection it came from, so a new
//! version or a restarted server is read afresh. At most [`MAX_BYTES`] of pages; the oldest
//! used goes first.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::resource::AppPage;

/// The most page text kept.
pub const MAX_BYTES: usize = 32 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PageKey {
    pub server: String,
    /// The server's own name and version, as it said at its start.
    pub server_info: Option<String>,
    /// When its connection began: a restart reads the page again.
    pub connected_at: Option<i64>,
    pub uri: String,
}

#[derive(Default)]
pub struct PageCache {
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for PageCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        f.debug_struct("PageCache").field("pages", &inner.pages.len()).field("bytes", &inner.bytes).finish()
    }
}

#[derive(Default)]
struct Inner {
    pages: HashMap<PageKey, (Arc<AppPage>, u64)>,
    bytes: usize,
    clock: u64,
}

impl PageCache {
    pub fn get(&self, key: &PageKey) -> Option<Arc<AppPage>> {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.clock += 1;
        let now = inner.clock;
        let (page, used) = inner.pages.get_mut(key)?;
        *used = now;
        Some(Arc::clone(page))
    }

    pub fn put(&self, key: PageKey, page: Arc<AppPage>) {
        let size = page.html.len();
        if size > MAX_BYTES {
            return;
        }
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.clock += 1;
        let now = inner.clock;
        if let Some((old, _)) = inner.pages.insert(key, (page, now)) {
            inner.bytes -= old.html.len();
        }
        inner.bytes += size;
        while inner.bytes > MAX_BYTES {
            let Some(oldest) = inner.pages.iter().min_by_key(|(_, (_, used))| *used).map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some((gone, _)) = inner.pages.remove(&oldest) {
                inner.bytes -= gone.html.len();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(server: &str, version: &str, connected: i64) -> PageKey {
        PageKey {
            server: server.into(),
            server_info: Some(version.into()),
            connected_at: Some(connected),
            uri: "ui://x".into(),
        }
    }

    fn page(bytes: usize) -> Arc<AppPage> {
        Arc::new(AppPage { html: "a".repeat(bytes), ui: None })
    }

    #[test]
    fn a_page_is_kept_per_server_version_and_connection() {
        let cache = PageCache::default();
        cache.put(key("clock", "clock 1.0", 1), page(10));
        assert!(cache.get(&key("clock", "clock 1.0", 1)).is_some());
        assert!(cache.get(&key("clock", "clock 1.1", 1)).is_none(), "a new version is read again");
        assert!(cache.get(&key("clock", "clock 1.0", 2)).is_none(), "a restarted server is read again");
        assert!(cache.get(&key("other", "clock 1.0", 1)).is_none());
    }

    #[test]
    fn the_least_recently_used_pages_go_when_it_is_full() {
        let cache = PageCache::default();
        let third = MAX_BYTES / 3;
        cache.put(key("a", "v", 1), page(third));
        cache.put(key("b", "v", 1), page(third));
        assert!(cache.get(&key("a", "v", 1)).is_some(), "a used again: b is now the oldest");
        cache.put(key("c", "v", 1), page(third));
        cache.put(key("d", "v", 1), page(third));
        assert!(cache.get(&key("b", "v", 1)).is_none());
        assert!(cache.get(&key("a", "v", 1)).is_some() && cache.get(&key("d", "v", 1)).is_some());
        cache.put(key("huge", "v", 1), page(MAX_BYTES + 1));
        assert!(cache.get(&key("huge", "v", 1)).is_none(), "too large to keep");
    }
}
