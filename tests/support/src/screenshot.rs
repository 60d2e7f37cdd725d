//! A fake `org.freedesktop.portal.Screenshot` on the private bus, with `portal.rs`'s Request
//! rules (the Response from another task, after the method returned). Answer 0 writes a real
//! PNG into a fresh file in the temporary folder, as KDE's and wlroots' backends do, and names
//! it by a `file://` uri.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use zbus::message::Header;
use zbus::zvariant::{OwnedObjectPath, OwnedValue};
use zbus::{Connection, fdo, interface};

use crate::portal::{PrivateBus, ROOT, Request, escaped_sender, respond, serve, token, value};

/// How the fake answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shot {
    /// Response 0 with a `width` x `height` picture, every pixel `pixel`.
    Picture { width: u32, height: u32, pixel: [u8; 4] },
    /// Response 1: cancelled or denied.
    Declined,
    /// Response 2.
    Failed,
    /// The Request is made, and never answered.
    Never,
}

#[derive(Debug, Default)]
pub struct State {
    /// The options of each call.
    pub calls: Vec<HashMap<String, OwnedValue>>,
    /// The files given.
    pub files: Vec<PathBuf>,
}

pub struct FakeScreenshot {
    _conn: Connection,
    pub state: Arc<Mutex<State>>,
}

impl FakeScreenshot {
    pub async fn start(bus: &PrivateBus, shot: Shot) -> Self {
        let state = Arc::new(Mutex::new(State::default()));
        let conn = serve(bus, Screenshot { shot, state: state.clone() }).await;
        Self { _conn: conn, state }
    }

    pub fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap()
    }
}

struct Screenshot {
    shot: Shot,
    state: Arc<Mutex<State>>,
}

#[interface(name = "org.freedesktop.portal.Screenshot")]
impl Screenshot {
    #[zbus(property, name = "version")]
    fn version(&self) -> u32 {
        2
    }

    async fn screenshot(
        &self,
        _parent_window: String,
        options: HashMap<String, OwnedValue>,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] conn: &Connection,
    ) -> fdo::Result<OwnedObjectPath> {
        self.state
            .lock()
            .unwrap()
            .calls
            .push(options.iter().map(|(k, v)| (k.clone(), v.try_clone().unwrap())).collect());
        let answer = match self.shot {
            Shot::Picture { width, height, pixel } => {
                let file = tempfile::Builder::new().prefix("Screenshot_").suffix(".png").tempfile().unwrap();
                let (_, path) = file.keep().unwrap();
                image::RgbaImage::from_pixel(width, height, image::Rgba(pixel)).save(&path).unwrap();
                self.state.lock().unwrap().files.push(path.clone());
                let uri = format!("file://{}", path.display());
                (0, HashMap::from([("uri".to_owned(), value(uri))]))
            }
            Shot::Declined => (1, HashMap::new()),
            Shot::Failed => (2, HashMap::new()),
            Shot::Never => {
                let (_, escaped) = escaped_sender(&header)?;
                let token = token(&options, "handle_token")?.unwrap_or_else(|| "portal_chosen".into());
                let path = OwnedObjectPath::try_from(format!("{ROOT}/request/{escaped}/{token}")).unwrap();
                conn.object_server().at(&path, Request).await?;
                return Ok(path);
            }
        };
        respond(conn, &header, &options, answer).await
    }
}
