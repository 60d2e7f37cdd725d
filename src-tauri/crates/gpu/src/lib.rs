//! The graphics card, for the local model (llama.cpp in the `perch-llm` sidecar) and dictation
//! (whisper.cpp in the app). Both are built with ggml's Vulkan backend, one backend for every
//! vendor on Linux.
//!
//! `loader` finds the system's Vulkan loader at run time, so a binary built with Vulkan still
//! starts (and runs on the CPU) where `libvulkan.so.1` is missing; `fit` decides how many of a
//! model's layers go to the device's memory.

pub mod fit;
pub mod loader;

pub use fit::{DeviceMemory, ModelShape, Placement, place};
