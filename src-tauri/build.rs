// Listing the app's commands makes each one a permission (`allow-<name>`), so the UI can call
// only what capabilities/*.json grants. The list is the one in src/bindings.rs.
include!("src/command_list.rs");

fn main() {
    println!("cargo:rerun-if-changed=src/bindings.rs");
    println!("cargo:rerun-if-changed=src/command_list.rs");
    let source: &'static str = Box::leak(
        std::fs::read_to_string("src/bindings.rs").expect("src/bindings.rs is readable").into_boxed_str(),
    );
    let commands = commands_in(source);
    assert!(!commands.is_empty(), "no collect_commands![...] list found in src/bindings.rs");
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(Box::leak(commands.into_boxed_slice()))),
    )
    .expect("tauri build script");
}
