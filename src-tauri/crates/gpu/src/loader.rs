//! The system's Vulkan loader, opened when ggml first asks for it.
//!
//! ggml's Vulkan backend reaches the whole Vulkan API through one function it links against,
//! `vkGetInstanceProcAddr`; every other entry point it looks up at run time through that one.
//! Linked directly, that makes `libvulkan.so.1` a dependency of the binary: without the loader
//! the app would not start at all. [`vulkan_loader_shim!`] defines that one function in the
//! binary instead (the binary's own definition wins over the library's, and `--as-needed`
//! then drops the library from the binary's dependencies); it opens the system's loader with
//! `dlopen` on first use. Where there is none, it hands ggml entry points that fail with
//! `VK_ERROR_INITIALIZATION_FAILED`, ggml's backend registration catches that, and the model
//! runs on the CPU. We never ship a loader of our own: the system's knows its drivers.

use std::ffi::{CStr, c_char, c_void};
use std::path::Path;
use std::sync::OnceLock;

/// A Vulkan function pointer as `vkGetInstanceProcAddr` returns it (`PFN_vkVoidFunction`).
pub type VoidFunction = Option<unsafe extern "C" fn()>;
type GetInstanceProcAddr = unsafe extern "C" fn(*mut c_void, *const c_char) -> VoidFunction;

/// The soname every Vulkan loader installs (Debian's `libvulkan1`, Fedora's `vulkan-loader`).
pub const LOADER: &str = "libvulkan.so.1";

/// `VK_ERROR_INITIALIZATION_FAILED`.
const INITIALIZATION_FAILED: i32 = -3;

struct Loader {
    /// The loader's handle (as an address: a `*mut c_void` is not `Sync`), never closed.
    handle: Result<usize, String>,
    get_instance_proc_addr: Result<GetInstanceProcAddr, String>,
}

static LOADER_STATE: OnceLock<Loader> = OnceLock::new();

fn loader() -> &'static Loader {
    LOADER_STATE.get_or_init(open)
}

/// Opens the loader only where there may be a card to use: the kernel lists a GPU (a DRM
/// render node), or a device was named (`GGML_VK_VISIBLE_DEVICES`, as the tests name lavapipe).
/// The loader opens every installed driver when ggml asks it for devices, and the process keeps
/// them mapped (Mesa's lavapipe brings LLVM): a machine with no card should not load drivers for
/// a search that cannot find one.
fn open() -> Loader {
    if std::env::var_os("GGML_VK_VISIBLE_DEVICES").is_none() && !has_render_node(Path::new("/dev/dri")) {
        let why = format!("{NO_CARD} (the kernel lists no GPU: no /dev/dri/renderD*)");
        return Loader { handle: Err(why.clone()), get_instance_proc_addr: Err(why) };
    }
    open_loader()
}

/// What the sidecar, whisper and `perch doctor` say when there is no card.
pub const NO_CARD: &str = "no Vulkan graphics card was found";

/// Whether `dri` (the kernel's `/dev/dri`) holds a render node, which every GPU driver with a
/// Vulkan driver above it creates.
fn has_render_node(dri: &Path) -> bool {
    std::fs::read_dir(dri).is_ok_and(|entries| {
        entries.filter_map(Result::ok).any(|e| e.file_name().to_string_lossy().starts_with("renderD"))
    })
}

#[allow(unsafe_code)]
fn open_loader() -> Loader {
    let soname = c"libvulkan.so.1";
    // SAFETY: dlopen with a NUL-terminated name; the handle is never closed, so the functions
    // looked up in it stay valid for the life of the process.
    let handle = unsafe { libc::dlopen(soname.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if handle.is_null() {
        let why = format!("the Vulkan loader ({LOADER}) is not installed: {}", dl_error());
        return Loader { handle: Err(why.clone()), get_instance_proc_addr: Err(why) };
    }
    // SAFETY: a live handle and a NUL-terminated name.
    let symbol = unsafe { libc::dlsym(handle, c"vkGetInstanceProcAddr".as_ptr()) };
    let get_instance_proc_addr = if symbol.is_null() {
        Err(format!("{LOADER} has no vkGetInstanceProcAddr: {}", dl_error()))
    } else {
        // SAFETY: the loader exports vkGetInstanceProcAddr with exactly this signature (Vulkan
        // specification, PFN_vkGetInstanceProcAddr).
        Ok(unsafe { std::mem::transmute::<*mut c_void, GetInstanceProcAddr>(symbol) })
    };
    Loader { handle: Ok(handle as usize), get_instance_proc_addr }
}

/// The loader's own export `name`, for the few commands ggml calls by name rather than through
/// `vkGetInstanceProcAddr`. Only ever called with an instance made, so with a loader there.
///
/// # Panics
/// Where the loader lacks the symbol: no Vulkan 1.1 loader does.
#[allow(unsafe_code)]
pub fn export(name: &CStr) -> *mut c_void {
    let handle = loader().handle.as_ref().map(|h| *h as *mut c_void);
    // SAFETY: a live handle (never closed) and a NUL-terminated name.
    let symbol = handle.map(|h| unsafe { libc::dlsym(h, name.as_ptr()) }).unwrap_or(std::ptr::null_mut());
    assert!(!symbol.is_null(), "{LOADER} does not export {name:?}");
    symbol
}

#[allow(unsafe_code)]
fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated message owned by libc, read at once.
    let message = unsafe { libc::dlerror() };
    if message.is_null() {
        "no reason given".to_owned()
    } else {
        // SAFETY: non-null and NUL-terminated (above).
        unsafe { CStr::from_ptr(message) }.to_string_lossy().into_owned()
    }
}

/// Why the system's Vulkan loader could not be used, or `None` once it is loaded.
pub fn unavailable() -> Option<&'static str> {
    loader().get_instance_proc_addr.as_ref().err().map(String::as_str)
}

/// Every Vulkan command ggml may call before it has an instance returns a `VkResult`, and the
/// C calling convention lets a function that takes no arguments stand in for one that takes
/// some: the caller passes them and cleans up.
extern "C" fn initialization_failed() -> i32 {
    INITIALIZATION_FAILED
}

/// What the shim's `vkGetInstanceProcAddr` does: forward to the system's loader, or, where
/// there is none, answer every lookup with a command that fails.
///
/// # Safety
/// `name` must be NUL-terminated, as the Vulkan specification requires of callers.
#[allow(unsafe_code)]
pub unsafe fn get_instance_proc_addr(instance: *mut c_void, name: *const c_char) -> VoidFunction {
    match loader().get_instance_proc_addr {
        // SAFETY: the caller's arguments, passed on to the loader's own function.
        Ok(real) => unsafe { real(instance, name) },
        Err(_) => {
            // SAFETY: both are `extern "C"` function pointers; see `initialization_failed`.
            let failing = unsafe {
                std::mem::transmute::<extern "C" fn() -> i32, unsafe extern "C" fn()>(initialization_failed)
            };
            Some(failing)
        }
    }
}

/// Defines `vkGetInstanceProcAddr` in the binary that expands it (write it once, at the top
/// level of `main.rs`), so that the binary starts without the Vulkan loader. See the module.
#[macro_export]
macro_rules! vulkan_loader_shim {
    () => {
        /// The Vulkan loader's entry point, found at run time (`perch_gpu::loader`).
        ///
        /// # Safety
        /// As the Vulkan specification's `vkGetInstanceProcAddr`.
        #[allow(unsafe_code)]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn vkGetInstanceProcAddr(
            instance: *mut ::std::ffi::c_void,
            name: *const ::std::ffi::c_char,
        ) -> $crate::loader::VoidFunction {
            // SAFETY: the caller's guarantees, passed on.
            unsafe { $crate::loader::get_instance_proc_addr(instance, name) }
        }

        // The three commands ggml's Vulkan backend calls by name (`nm -u` on its library), each
        // forwarded to the loader's export: they run only once an instance exists.
        $crate::vulkan_forward!(vkGetDeviceProcAddr(device: *mut ::std::ffi::c_void, name: *const ::std::ffi::c_char) -> $crate::loader::VoidFunction);
        $crate::vulkan_forward!(vkGetPhysicalDeviceFeatures2(device: *mut ::std::ffi::c_void, features: *mut ::std::ffi::c_void) -> ());
        $crate::vulkan_forward!(vkCmdCopyBuffer(buffer: *mut ::std::ffi::c_void, src: u64, dst: u64, count: u32, regions: *const ::std::ffi::c_void) -> ());
    };
}

/// One Vulkan command defined in the binary and forwarded to the loader's export of that name.
#[doc(hidden)]
#[macro_export]
macro_rules! vulkan_forward {
    ($name:ident($($arg:ident: $ty:ty),*) -> $ret:ty) => {
        /// Forwarded to the system's Vulkan loader (`perch_gpu::loader`).
        ///
        /// # Safety
        /// As the Vulkan specification's command of this name.
        #[allow(unsafe_code, non_snake_case, clippy::unused_unit)]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
            static REAL: ::std::sync::OnceLock<usize> = ::std::sync::OnceLock::new();
            let real = *REAL.get_or_init(|| {
                let name = concat!(stringify!($name), "\0");
                let name = ::std::ffi::CStr::from_bytes_with_nul(name.as_bytes()).expect("NUL-terminated");
                $crate::loader::export(name) as usize
            });
            // SAFETY: the loader's export of this name has this signature (Vulkan specification).
            let real: unsafe extern "C" fn($($ty),*) -> $ret = unsafe { ::std::mem::transmute(real) };
            // SAFETY: the caller's guarantees, passed on.
            unsafe { real($($arg),*) }
        }
    };
}

#[cfg(test)]
#[allow(unsafe_code, clippy::unwrap_used)]
mod tests {
    use super::*;

    type EnumerateInstanceVersion = unsafe extern "C" fn(*mut u32) -> i32;

    #[test]
    fn the_system_loader_is_opened_and_answers() {
        // libvulkan1 is a build and test dependency (scripts/setup-system.sh).
        let loader = open_loader();
        assert!(loader.handle.is_ok());
        let real = loader.get_instance_proc_addr.unwrap();
        // SAFETY: a NUL-terminated name and no instance, as the specification allows for
        // global commands.
        let f = unsafe { real(std::ptr::null_mut(), c"vkEnumerateInstanceVersion".as_ptr()) };
        let f: EnumerateInstanceVersion = unsafe { std::mem::transmute(f.unwrap()) };
        let mut version = 0u32;
        // SAFETY: the loader's vkEnumerateInstanceVersion, given a place to write.
        assert_eq!(unsafe { f(&mut version) }, 0, "VK_SUCCESS");
        assert!(version >> 22 >= 1, "a Vulkan 1.x loader: {version:#x}");
    }

    #[test]
    fn render_nodes_are_what_says_a_card_may_be_there() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!has_render_node(&dir.path().join("absent")));
        std::fs::write(dir.path().join("card0"), "").unwrap();
        assert!(!has_render_node(dir.path()), "a display controller alone renders nothing");
        std::fs::write(dir.path().join("renderD128"), "").unwrap();
        assert!(has_render_node(dir.path()));
    }

    #[test]
    fn without_a_loader_every_command_fails_cleanly() {
        let failing = initialization_failed as extern "C" fn() -> i32;
        // SAFETY: the stand-in takes no arguments; the caller's are ignored (see above).
        let f: EnumerateInstanceVersion = unsafe { std::mem::transmute(failing) };
        let mut version = 0u32;
        assert_eq!(unsafe { f(&mut version) }, INITIALIZATION_FAILED);
        assert_eq!(version, 0);
    }
}
