// whisper.cpp's Vulkan backend finds the system's Vulkan loader at run time, so `perch` starts
// (and transcribes on the CPU) where there is none (perch_gpu::loader).
perch_gpu::vulkan_loader_shim!();

fn main() -> std::process::ExitCode {
    perch_cli::main()
}
