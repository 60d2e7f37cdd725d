//! A capture passes through buffers of several megabytes (the grab, the scaled copy, the
//! encoders' output) on whichever blocking thread ran it. glibc gives each thread's arena
//! back to the system only when its top is free, so without a trim the app kept about 3 MB
//! per capture, up to some 40 MB after a few dozen (`make bench`, capture_chip). Trimming
//! after a capture returns the freed pages of every arena.

/// Returns memory freed by a capture to the system (glibc only; elsewhere nothing to do).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
pub fn release_freed() {
    // SAFETY: malloc_trim takes no pointers; it walks glibc's own arenas under their locks and
    // only releases pages no allocation uses.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn release_freed() {}
