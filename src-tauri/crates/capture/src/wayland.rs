//! Monitors on Wayland from the compositor itself, for a session without XWayland (where xcap,
//! which asks the X server, finds none): each `wl_output` (its current mode in pixels, its
//! scale, its position) and, where the compositor offers `zxdg_output_manager_v1`, its logical
//! position, size and name. In Perch's desktop units, like xcap's: logical positions scaled by
//! the monitor's factor, sizes in the monitor's own pixels.

use wayland_client::globals::{GlobalListContents, registry_queue_init};
use wayland_client::protocol::{wl_output, wl_registry};
use wayland_client::{Connection, Dispatch, QueueHandle, WEnum};
use wayland_protocols::xdg::xdg_output::zv1::client::zxdg_output_manager_v1::ZxdgOutputManagerV1;
use wayland_protocols::xdg::xdg_output::zv1::client::zxdg_output_v1::{self, ZxdgOutputV1};

use super::geometry::{MonitorInfo, Rect};

/// What the compositor said of one output.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Output {
    pub name: Option<String>,
    /// `wl_output.geometry`'s position (compositor space, which is logical on every compositor
    /// Perch knows), used where xdg-output is not offered.
    pub position: (i32, i32),
    /// The current mode, in the monitor's pixels, before any rotation.
    pub mode: (i32, i32),
    /// `wl_output.scale`: a whole number (a fractional scale is rounded up).
    pub scale: i32,
    pub logical_position: Option<(i32, i32)>,
    pub logical_size: Option<(i32, i32)>,
}

/// Why the compositor could not be asked for its monitors.
#[derive(Debug, thiserror::Error)]
pub enum NotAsked {
    #[error("no Wayland display to ask ({0})")]
    NoDisplay(String),
    #[error("the compositor's globals ({0})")]
    Globals(String),
    #[error("the compositor did not answer ({0})")]
    NoAnswer(String),
}

/// The monitors, or why the compositor could not be asked.
pub fn monitors() -> Result<Vec<MonitorInfo>, NotAsked> {
    let conn = Connection::connect_to_env().map_err(|e| NotAsked::NoDisplay(e.to_string()))?;
    let (globals, mut queue) =
        registry_queue_init::<Outputs>(&conn).map_err(|e| NotAsked::Globals(e.to_string()))?;
    let qh = queue.handle();
    let manager: Option<ZxdgOutputManagerV1> = globals.bind(&qh, 2..=3, ()).ok();
    let mut state = Outputs::default();
    for global in globals.contents().clone_list().into_iter().filter(|g| g.interface == "wl_output") {
        let index = state.0.len();
        state.0.push(Output { scale: 1, ..Output::default() });
        let output: wl_output::WlOutput =
            globals.registry().bind(global.name, global.version.min(4), &qh, index);
        if let Some(manager) = &manager {
            manager.get_xdg_output(&output, &qh, index);
        }
    }
    // One round trip delivers the bound objects' first events.
    queue.roundtrip(&mut state).map_err(|e| NotAsked::NoAnswer(e.to_string()))?;
    Ok(state.0.iter().enumerate().map(|(i, o)| monitor(i, o)).collect())
}

/// One output in Perch's desktop units; the first is taken as primary (Wayland has none).
pub(crate) fn monitor(index: usize, o: &Output) -> MonitorInfo {
    let (mode_w, mode_h) = (f64::from(o.mode.0.max(1)), f64::from(o.mode.1.max(1)));
    let (scale, width, height) = match o.logical_size {
        // The real factor, fractional ones too; the longer sides match whatever the rotation.
        Some((lw, lh)) if lw > 0 && lh > 0 => {
            let scale = mode_w.max(mode_h) / f64::from(lw.max(lh));
            (scale, (f64::from(lw) * scale).round(), (f64::from(lh) * scale).round())
        }
        _ => (f64::from(o.scale.max(1)), mode_w, mode_h),
    };
    let (x, y) = o.logical_position.unwrap_or(o.position);
    let name = o.name.clone().unwrap_or_else(|| format!("monitor-{}", index + 1));
    MonitorInfo {
        id: name.clone(),
        name,
        rect: Rect::new(
            (f64::from(x) * scale).round() as i32,
            (f64::from(y) * scale).round() as i32,
            width as u32,
            height as u32,
        ),
        scale,
        primary: index == 0,
    }
}

/// The outputs bound, by the index each object carries.
#[derive(Default)]
struct Outputs(Vec<Output>);

impl Dispatch<wl_registry::WlRegistry, GlobalListContents> for Outputs {
    fn event(
        _: &mut Self,
        _: &wl_registry::WlRegistry,
        _: wl_registry::Event,
        _: &GlobalListContents,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
    }
}

impl Dispatch<wl_output::WlOutput, usize> for Outputs {
    fn event(
        state: &mut Self,
        _: &wl_output::WlOutput,
        event: wl_output::Event,
        index: &usize,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        let Some(o) = state.0.get_mut(*index) else { return };
        match event {
            wl_output::Event::Geometry { x, y, .. } => o.position = (x, y),
            wl_output::Event::Mode { flags: WEnum::Value(flags), width, height, .. }
                if flags.contains(wl_output::Mode::Current) =>
            {
                o.mode = (width, height)
            }
            wl_output::Event::Scale { factor } => o.scale = factor,
            wl_output::Event::Name { name } => {
                o.name.get_or_insert(name);
            }
            _ => {}
        }
    }
}

impl Dispatch<ZxdgOutputManagerV1, ()> for Outputs {
    fn event(
        _: &mut Self,
        _: &ZxdgOutputManagerV1,
        _: <ZxdgOutputManagerV1 as wayland_client::Proxy>::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
    }
}

impl Dispatch<ZxdgOutputV1, usize> for Outputs {
    fn event(
        state: &mut Self,
        _: &ZxdgOutputV1,
        event: zxdg_output_v1::Event,
        index: &usize,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        let Some(o) = state.0.get_mut(*index) else { return };
        match event {
            zxdg_output_v1::Event::LogicalPosition { x, y } => o.logical_position = Some((x, y)),
            zxdg_output_v1::Event::LogicalSize { width, height } => o.logical_size = Some((width, height)),
            zxdg_output_v1::Event::Name { name } => o.name = Some(name),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logical_positions_are_scaled_and_sizes_are_the_monitor_s_pixels() {
        let left = Output {
            name: Some("eDP-1".into()),
            mode: (2880, 1800),
            scale: 2,
            logical_position: Some((0, 0)),
            logical_size: Some((1440, 900)),
            ..Output::default()
        };
        let m = monitor(0, &left);
        assert_eq!(
            (m.rect, m.scale, m.primary, m.name.as_str()),
            (Rect::new(0, 0, 2880, 1800), 2.0, true, "eDP-1")
        );

        // Fractional 1.5, to the right of a 1440-wide logical monitor.
        let right = Output {
            mode: (1920, 1080),
            scale: 2,
            logical_position: Some((1440, 0)),
            logical_size: Some((1280, 720)),
            ..Output::default()
        };
        let m = monitor(1, &right);
        assert_eq!(
            (m.rect, m.scale, m.primary, m.name.as_str()),
            (Rect::new(2160, 0, 1920, 1080), 1.5, false, "monitor-2")
        );

        // Rotated: the mode is given before the rotation, the logical size after.
        let portrait =
            Output { mode: (1920, 1080), scale: 1, logical_size: Some((1080, 1920)), ..Output::default() };
        assert_eq!(monitor(0, &portrait).rect, Rect::new(0, 0, 1080, 1920));

        // No xdg-output: wl_output's own position, mode and whole scale.
        let plain = Output { position: (1920, 0), mode: (1920, 1080), scale: 1, ..Output::default() };
        assert_eq!(monitor(0, &plain).rect, Rect::new(1920, 0, 1920, 1080));
    }
}
