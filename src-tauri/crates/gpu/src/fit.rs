//! How many of a model's layers go to the graphics card.
//!
//! llama.cpp offloads a model a layer at a time: the first `n` of its repeating layers (their
//! weights and their share of the KV cache) go to the device's memory, the rest stay with the
//! CPU, and one more (`n_layer + 1`) moves the output layer too. By default Perch offloads as
//! many as fit the device's *free* memory after a headroom for the compute buffers, the
//! desktop's own use of the card, and what else Perch keeps there (the whisper model).

/// What decides a model's placement, from its file's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelShape {
    /// Bytes of weights (the tensor data in the file).
    pub weights: u64,
    /// Repeating layers (`<arch>.block_count`).
    pub layers: u32,
    /// Bytes of KV cache a token of context takes across all layers.
    pub kv_bytes_per_token: u64,
    /// Tokens of context the model will be given.
    pub context: u32,
}

impl ModelShape {
    /// Layers llama.cpp can offload: the repeating ones and the output layer.
    pub fn offloadable(&self) -> u32 {
        self.layers.saturating_add(1)
    }

    /// Bytes one offloaded layer takes on the device: its weights and its part of the cache.
    fn per_layer(&self) -> u64 {
        let weights = self.weights / u64::from(self.offloadable());
        let cache = self.kv_bytes_per_token * u64::from(self.context) / u64::from(self.layers.max(1));
        (weights + cache).max(1)
    }
}

/// A device's memory as its driver reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceMemory {
    pub free: u64,
    pub total: u64,
}

/// llama.cpp's compute buffers on the device (the graph's intermediate tensors, the logits of a
/// batch): measured at 150-320 MiB for the 0.6-4B models the catalogue lists at batch 512.
pub const COMPUTE_BUFFERS: u64 = 384 << 20;

/// Left free for the desktop (the compositor and the browser share the card): 5% of the
/// device, at least 256 MiB.
pub fn headroom(total: u64) -> u64 {
    (total / 20).max(256 << 20)
}

/// Where a model's layers go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// Layers on the device; 0 is the CPU only.
    pub layers: u32,
    pub of: u32,
    /// Why fewer than all, in words for Settings and `perch doctor`; `None` when all fit.
    pub limited_by: Option<String>,
}

/// Decides the placement of `model` on a device with `memory`, leaving `reserved` bytes for
/// what else Perch keeps on it. `asked` is the user's number of layers for this model (0: the
/// CPU only; more than the model has: all of them); `None` places as many as fit.
pub fn place(model: &ModelShape, memory: DeviceMemory, asked: Option<u32>, reserved: u64) -> Placement {
    let of = model.offloadable();
    match asked {
        Some(0) => {
            Placement { layers: 0, of, limited_by: Some("the GPU is turned off for this model".to_owned()) }
        }
        Some(n) if n >= of => Placement { layers: of, of, limited_by: None },
        Some(n) => {
            Placement { layers: n, of, limited_by: Some(format!("{n} layers were asked for this model")) }
        }
        None => {
            let kept = headroom(memory.total) + COMPUTE_BUFFERS + reserved;
            let budget = memory.free.saturating_sub(kept);
            let fit = u32::try_from(budget / model.per_layer()).unwrap_or(u32::MAX).min(of);
            let limited_by = (fit < of).then(|| {
                let need = u64::from(of) * model.per_layer() + kept;
                format!(
                    "{fit} of {of} layers fit: the model and its context need {} on the GPU, {} is free",
                    mib(need),
                    mib(memory.free)
                )
            });
            Placement { layers: fit, of, limited_by }
        }
    }
}

fn mib(bytes: u64) -> String {
    format!("{} MiB", bytes >> 20)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    /// Qwen3 0.6B at Q8_0 with a 4,096-token context: 28 layers, 639 MB, 112 KiB a token.
    fn qwen3_small() -> ModelShape {
        ModelShape { weights: 639_446_688, layers: 28, kv_bytes_per_token: 28 * 8 * 256 * 2, context: 4096 }
    }

    #[test]
    fn a_card_with_room_takes_every_layer() {
        let card = DeviceMemory { free: 7 * GIB, total: 8 * GIB };
        let placed = place(&qwen3_small(), card, None, 0);
        assert_eq!((placed.layers, placed.of, placed.limited_by), (29, 29, None));
    }

    #[test]
    fn a_full_card_takes_what_fits_and_says_why() {
        // 1.2 GiB free: 1.2 GiB - 409.6 MiB headroom - 384 MiB buffers leaves ~435 MiB, and a
        // layer is 639 MB / 29 (21 MiB) plus 459 MiB / 28 of cache (16.4 MiB).
        let card = DeviceMemory { free: GIB + GIB / 5, total: 8 * GIB };
        let placed = place(&qwen3_small(), card, None, 0);
        assert!((10..=13).contains(&placed.layers), "{placed:?}");
        let why = placed.limited_by.unwrap_or_default();
        assert!(
            why.starts_with(&format!("{} of 29 layers fit", placed.layers))
                && why.contains("1228 MiB is free"),
            "{why}"
        );
    }

    #[test]
    fn the_whisper_model_on_the_card_leaves_less_for_the_chat_model() {
        let card = DeviceMemory { free: 2 * GIB, total: 2 * GIB };
        let alone = place(&qwen3_small(), card, None, 0);
        let beside_whisper = place(&qwen3_small(), card, None, 800 << 20);
        assert!(beside_whisper.layers < alone.layers, "{alone:?} {beside_whisper:?}");
    }

    #[test]
    fn a_card_smaller_than_the_headroom_runs_nothing() {
        let card = DeviceMemory { free: 500 << 20, total: 512 << 20 };
        let placed = place(&qwen3_small(), card, None, 0);
        assert_eq!(placed.layers, 0);
        assert!(placed.limited_by.is_some());
    }

    #[test]
    fn the_override_wins() {
        let tiny = DeviceMemory { free: 0, total: 0 };
        assert_eq!(place(&qwen3_small(), tiny, Some(u32::MAX), 0).layers, 29);
        assert_eq!(place(&qwen3_small(), tiny, Some(99), 0).layers, 29);
        let some = place(&qwen3_small(), tiny, Some(5), 0);
        assert_eq!((some.layers, some.limited_by.is_some()), (5, true));
        let roomy = DeviceMemory { free: 64 * GIB, total: 64 * GIB };
        assert_eq!(place(&qwen3_small(), roomy, Some(0), 0).layers, 0);
    }
}
