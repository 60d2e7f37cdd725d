//! The graphics cards llama.cpp's Vulkan backend found, and why there are none.
//!
//! ggml's Vulkan backend uses every discrete card, else the first integrated one, and never a
//! software device (Mesa's lavapipe is slower than the CPU backend); `GGML_VK_VISIBLE_DEVICES`
//! overrides that choice (the tests pick lavapipe with it).

use llama_cpp_2::{LlamaBackendDevice, LlamaBackendDeviceType, list_llama_ggml_backend_devices};
use perch_llm_protocol::wire::GpuDevice;

#[derive(Debug, Clone)]
pub struct Gpu {
    /// ggml's device index (`LlamaModelParams::with_devices`).
    pub index: usize,
    pub report: GpuDevice,
}

pub struct Gpus {
    pub devices: Vec<Gpu>,
    pub none_because: Option<String>,
}

impl Gpus {
    pub fn find() -> Self {
        let devices = vulkan_devices();
        let none_because = devices.is_empty().then(|| match perch_gpu::loader::unavailable() {
            Some(why) => why.to_owned(),
            None => "no Vulkan graphics card was found (`vulkaninfo --summary` lists what Vulkan sees; \
                     a driver may be missing, and software renderers are not used)"
                .to_owned(),
        });
        if let Some(why) = &none_because {
            tracing::info!("running on the CPU: {why}");
        }
        for gpu in &devices {
            tracing::info!(
                device = %gpu.report.description,
                free_mib = gpu.report.memory_free >> 20,
                total_mib = gpu.report.memory_total >> 20,
                "Vulkan device"
            );
        }
        Self { devices, none_because }
    }

    /// The card models go to, with its free memory as of now (other programs come and go).
    pub fn main(&self) -> Option<Gpu> {
        let first = self.devices.first()?;
        Some(vulkan_devices().into_iter().find(|d| d.index == first.index).unwrap_or_else(|| first.clone()))
    }
}

fn vulkan_devices() -> Vec<Gpu> {
    list_llama_ggml_backend_devices()
        .into_iter()
        .filter(|d| d.backend == "Vulkan" && !matches!(d.device_type, LlamaBackendDeviceType::Cpu))
        .map(|d: LlamaBackendDevice| Gpu {
            index: d.index,
            report: GpuDevice {
                name: d.name,
                description: d.description,
                memory_total: d.memory_total as u64,
                memory_free: d.memory_free as u64,
            },
        })
        .collect()
}

/// The one way to make a graphics card fail on purpose, for the fallback's tests (a real card's
/// failure cannot be caused from outside): `PERCH_LLM_FAIL_GPU=load` fails every load that puts
/// layers on the card, `PERCH_LLM_FAIL_GPU=token:N` fails the evaluation that reaches the Nth
/// token a model on the card has evaluated since it was loaded (prompts count). Unset in the app.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum InjectedFailure {
    #[default]
    None,
    Load,
    Token(u64),
}

impl InjectedFailure {
    pub fn from_env() -> Self {
        match std::env::var("PERCH_LLM_FAIL_GPU").ok().as_deref() {
            Some("load") => Self::Load,
            Some(other) => {
                other.strip_prefix("token:").and_then(|n| n.parse().ok()).map_or(Self::None, Self::Token)
            }
            None => Self::None,
        }
    }
}
