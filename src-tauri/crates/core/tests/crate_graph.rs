//! The crate graph ARCHITECTURE.md draws, checked against what Cargo resolves: every crate of
//! the workspace has a tier, and a crate's dependencies (normal and build) lie in lower tiers
//! only. So a capability never depends on the engine or on another capability, the foundation
//! depends on nothing of Perch's, and a new crate must be placed on the map before it builds
//! into the app. Dev-dependencies are free (a test may use a fake or the engine), except that a
//! capability's tests never need the engine: `cargo test -p` of a capability runs alone.
//! Inside each crate, the top-level modules depend one way too: no circle of `crate::` paths
//! between them (a circle inside one folder is that folder's own business).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Lower tiers are depended on; a crate sees only tiers below its own.
const TIERS: &[(&str, &[&str])] = &[
    (
        "foundation: knows nothing of any capability",
        &[
            "perch-foundation",
            "perch-ipc",
            "perch-llm-protocol",
            "perch-crash",
            "perch-download",
            "perch-gpu",
            "perch-sandbox",
            "perch-mcp-stdio",
            "perch-fake-llm",
            "perch-fake-google",
        ],
    ),
    ("the words of tool calls: what the capabilities that offer tools and the store share", &["perch-tools"]),
    (
        "building blocks: what several capabilities share",
        &[
            "perch-portals",
            "perch-oauth",
            "perch-retrieval",
            "perch-llm",
            "perch-store",
            "perch-files",
            "perch-local",
            // Only ever a dev-dependency; here because it builds and probes the sandbox launcher.
            "perch-test-support",
        ],
    ),
    ("capabilities and the MCP servers: one each, never one on another", CAPABILITIES),
    ("the engine: wires the capabilities", &["perch-core", "perch-mcp"]),
    ("the command line", &["perch-cli"]),
    ("the desktop shell", &["perch-desktop"]),
];

const ENGINE: &str = "perch-core";
/// The engine's capabilities.
const CAPABILITIES: &[&str] = &[
    "perch-terminal",
    "perch-mcp-client",
    "perch-review",
    "perch-providers",
    "perch-capture",
    "perch-voice",
    "perch-speech",
    "perch-typing",
    "perch-google",
    "perch-knowledge",
    "perch-memories",
    // The app's own updates: the shell wires them (the command line asks the running app).
    "perch-update",
];
/// The bundled MCP servers: programs of their own, in the capabilities' tier (the review
/// server's test talks to a real engine, so the engine rule below is not theirs).
const MCP_SERVERS: &[&str] =
    &["perch-mcp-demo", "perch-mcp-filesystem", "perch-mcp-google", "perch-mcp-review", "perch-mcp-web"];

fn tier_of(name: &str) -> Option<usize> {
    let name = if MCP_SERVERS.contains(&name) { CAPABILITIES[0] } else { name };
    TIERS.iter().position(|(_, crates)| crates.contains(&name))
}

fn metadata() -> serde_json::Value {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline", "--manifest-path"])
        .arg(root.join("Cargo.toml"))
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("cargo metadata's JSON")
}

/// Each workspace crate and its Perch dependencies, with their kind ("normal", "dev", "build").
fn workspace() -> BTreeMap<String, Vec<(String, String)>> {
    let meta = metadata();
    let packages = meta["packages"].as_array().expect("packages");
    let ours: Vec<String> =
        packages.iter().map(|p| p["name"].as_str().unwrap_or_default().to_owned()).collect();
    packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|d| {
                    let name = d["name"].as_str()?;
                    ours.iter()
                        .any(|o| o == name)
                        .then(|| (name.to_owned(), d["kind"].as_str().unwrap_or("normal").to_owned()))
                })
                .collect();
            (p["name"].as_str().unwrap_or_default().to_owned(), deps)
        })
        .collect()
}

/// What breaks the map, in words; empty when the graph is the one drawn.
fn problems(graph: &BTreeMap<String, Vec<(String, String)>>) -> Vec<String> {
    let mut found = Vec::new();
    for (name, deps) in graph {
        let Some(own) = tier_of(name) else {
            found.push(format!(
                "{name} is on no tier: place it in TIERS here and in ARCHITECTURE.md's crate graph"
            ));
            continue;
        };
        for (dep, kind) in deps {
            if kind == "dev" {
                if CAPABILITIES.contains(&name.as_str()) && dep == ENGINE {
                    found.push(format!(
                        "{name}'s tests use the engine ({dep}): a capability's tests run without it"
                    ));
                }
                continue;
            }
            let Some(theirs) = tier_of(dep) else { continue };
            if theirs >= own {
                found.push(format!(
                    "{name} ({}) depends on {dep} ({}): dependencies run to lower tiers only",
                    TIERS[own].0, TIERS[theirs].0
                ));
            }
        }
    }
    found
}

#[test]
fn dependencies_run_one_way_as_architecture_draws_them() {
    let graph = workspace();
    assert!(
        graph.contains_key(ENGINE) && graph.contains_key("perch-voice"),
        "the workspace is read: {:?}",
        graph.keys()
    );
    let found = problems(&graph);
    assert!(found.is_empty(), "the crate graph is not the one drawn:\n  {}", found.join("\n  "));
}

#[test]
fn the_check_refuses_an_engine_below_or_two_capabilities_tied() {
    // The rules themselves, on the real graph with one wrong edge added each time.
    let real = workspace();
    let with = |from: &str, to: &str, kind: &str| {
        let mut g = real.clone();
        g.get_mut(from).unwrap().push((to.to_owned(), kind.to_owned()));
        problems(&g)
    };
    assert!(
        with("perch-voice", ENGINE, "normal")
            .iter()
            .any(|p| p.contains("perch-voice") && p.contains("lower tiers"))
    );
    assert!(
        with("perch-typing", "perch-capture", "normal")
            .iter()
            .any(|p| p.contains("perch-typing") && p.contains("perch-capture"))
    );
    assert!(
        with("perch-foundation", "perch-portals", "build").iter().any(|p| p.contains("perch-foundation"))
    );
    assert!(with("perch-capture", ENGINE, "dev").iter().any(|p| p.contains("tests use the engine")));
    // A test of the engine may use a fake; the shell uses the engine.
    assert!(with(ENGINE, "perch-fake-llm", "dev").is_empty());
    assert!(with("perch-desktop", ENGINE, "normal").is_empty());
    let mut unplaced = real.clone();
    unplaced.insert("perch-new-thing".into(), vec![]);
    assert!(problems(&unplaced).iter().any(|p| p.contains("perch-new-thing is on no tier")));
}

/// Each workspace crate's root source files (`lib.rs`, `main.rs`), by crate and target name.
fn crate_roots() -> Vec<(String, PathBuf)> {
    let meta = metadata();
    let mut roots = Vec::new();
    for package in meta["packages"].as_array().expect("packages") {
        for target in package["targets"].as_array().into_iter().flatten() {
            let kinds: Vec<&str> =
                target["kind"].as_array().into_iter().flatten().filter_map(|k| k.as_str()).collect();
            if !kinds.iter().any(|k| ["lib", "bin", "rlib", "cdylib", "staticlib"].contains(k)) {
                continue;
            }
            let src = PathBuf::from(target["src_path"].as_str().unwrap_or_default());
            let name = format!("{} ({})", package["name"].as_str().unwrap_or_default(), target["name"]);
            roots.push((name, src));
        }
    }
    roots
}

/// The first segment of each path in a `use` tree's inside (`a::b, c::{d, e}, f as g`).
fn first_segments(tree: &str) -> Vec<String> {
    let (mut depth, mut start, mut out) = (0, 0, Vec::new());
    let mut push = |item: &str| {
        let head = item.trim().split("::").next().unwrap_or_default().split_whitespace().next();
        if let Some(head) = head.filter(|h| !h.is_empty()) {
            out.push(head.trim_matches(|c| c == '{' || c == '}').to_owned());
        }
    };
    for (i, c) in tree.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                push(&tree[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    push(&tree[start..]);
    out
}

/// What follows each `crate::` in `code` (comments left out): the names it starts with.
fn crate_paths(code: &str) -> Vec<String> {
    let code: String =
        code.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
    let mut names = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        // `perch_crate::x` or `some_crate::x` are other crates' paths.
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(inside) = rest.strip_prefix('{') {
            let mut depth = 1;
            let end = inside
                .char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '{' => 1,
                        '}' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map_or(inside.len(), |(i, _)| i);
            names.extend(first_segments(&inside[..end]));
        } else {
            let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
            names.push(rest[..end].to_owned());
        }
    }
    names
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A crate's top-level modules and the others each names through `crate::` (a name the root
/// re-exports counts as the module it comes from: `crate::Engine` is `engine`'s).
fn module_graph(root_file: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let src = root_file.parent().expect("a source folder");
    let root_code = std::fs::read_to_string(root_file).unwrap_or_default();
    let mut modules: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for entry in std::fs::read_dir(src).into_iter().flatten().flatten() {
        let path = entry.path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()).map(str::to_owned) else { continue };
        if path == root_file || !(path.is_dir() || path.extension().is_some_and(|e| e == "rs")) {
            continue;
        }
        // Only the modules the root declares (a bin's other files may belong to another target).
        if !root_code.contains(&format!("mod {stem};")) && !root_code.contains(&format!("mod {stem} {{")) {
            continue;
        }
        let files = modules.entry(stem).or_default();
        if path.is_dir() {
            rust_files(&path, files);
        } else {
            files.push(path);
        }
    }
    // `pub use engine::{Engine, StartError};` in the root: those names are `engine`'s.
    let mut reexported: BTreeMap<String, String> = BTreeMap::new();
    for statement in root_code.split(';') {
        let Some(tree) = statement.trim().strip_prefix("pub use ") else { continue };
        let Some((module, names)) = tree.split_once("::") else { continue };
        if modules.contains_key(module) {
            for name in names.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|n| !n.is_empty()) {
                reexported.insert(name.to_owned(), module.to_owned());
            }
        }
    }
    modules
        .iter()
        .map(|(module, files)| {
            let mut uses = BTreeSet::new();
            for file in files {
                for name in crate_paths(&std::fs::read_to_string(file).unwrap_or_default()) {
                    let target =
                        if modules.contains_key(&name) { Some(&name) } else { reexported.get(&name) };
                    if let Some(target) = target.filter(|t| *t != module) {
                        uses.insert(target.clone());
                    }
                }
            }
            (module.clone(), uses)
        })
        .collect()
}

/// The circles in a module graph, each as its modules in order.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    let reach = |from: &str| {
        let (mut seen, mut todo) = (BTreeSet::new(), vec![from.to_owned()]);
        while let Some(m) = todo.pop() {
            for next in graph.get(&m).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> = graph.keys().map(|m| (m, reach(m))).collect();
    let mut found: Vec<BTreeSet<String>> = Vec::new();
    for (m, seen) in &reaches {
        if !seen.contains(*m) || found.iter().any(|c| c.contains(*m)) {
            continue;
        }
        found.push(seen.iter().filter(|o| reaches[o].contains(*m)).cloned().collect());
    }
    found
}

#[test]
fn no_crate_has_a_circle_between_its_top_level_modules() {
    let roots = crate_roots();
    assert!(roots.iter().any(|(name, _)| name.starts_with("perch-core ")), "the crates are read: {roots:?}");
    let core = roots.iter().find(|(name, _)| name.starts_with("perch-core ")).unwrap();
    let graph = module_graph(&core.1);
    assert!(
        graph.get("engine").is_some_and(|uses| uses.contains("agent")),
        "perch-core's modules are read: {graph:?}"
    );
    let mut found = Vec::new();
    for (name, root) in &roots {
        for circle in circles(&module_graph(root)) {
            found.push(format!("{name}: {}", circle.into_iter().collect::<Vec<_>>().join(" -> ")));
        }
    }
    assert!(found.is_empty(), "modules that import each other:\n  {}", found.join("\n  "));
}

#[test]
fn the_module_check_sees_a_circle_through_a_reexported_name() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::write(
        src.join("lib.rs"),
        "pub mod agent;\npub mod engine;\nmod notes;\npub use engine::{Engine, StartError};\n",
    )
    .unwrap();
    std::fs::create_dir(src.join("agent")).unwrap();
    std::fs::write(src.join("agent/mod.rs"), "mod turn;\n// crate::notes is only named in a comment\n")
        .unwrap();
    std::fs::write(src.join("agent/turn.rs"), "use crate::Engine;\nuse perch_crate::notes;\n").unwrap();
    std::fs::write(src.join("engine.rs"), "use crate::{agent::Agent, notes};\n").unwrap();
    std::fs::write(src.join("notes.rs"), "").unwrap();
    let graph = module_graph(&src.join("lib.rs"));
    assert_eq!(graph["agent"], BTreeSet::from(["engine".to_owned()]), "{graph:?}");
    assert_eq!(graph["engine"], BTreeSet::from(["agent".to_owned(), "notes".to_owned()]));
    assert_eq!(circles(&graph), vec![BTreeSet::from(["agent".to_owned(), "engine".to_owned()])]);
    // The same crate with the agent taking its parts instead of the engine: no circle.
    std::fs::write(src.join("agent/turn.rs"), "use super::Agent;\n").unwrap();
    assert!(circles(&module_graph(&src.join("lib.rs"))).is_empty());
}
