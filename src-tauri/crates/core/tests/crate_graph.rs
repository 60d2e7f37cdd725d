//! The crate graph ARCHITECTURE.md draws, checked against what Cargo resolves: every crate of
//! the workspace has a tier, and a crate's dependencies (normal and build) lie in lower tiers
//! only. So a capability never depends on the engine or on another capability, the foundation
//! depends on nothing of Perch's, and a new crate must be placed on the map before it builds
//! into the app. Dev-dependencies are free (a test may use a fake or the engine), except that a
//! capability's tests never need the engine: `cargo test -p` of a capability runs alone.

use std::collections::BTreeMap;
use std::path::Path;
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
    "perch-typing",
    "perch-google",
];
/// The bundled MCP servers: programs of their own, in the capabilities' tier (the review
/// server's test talks to a real engine, so the engine rule below is not theirs).
const MCP_SERVERS: &[&str] =
    &["perch-mcp-demo", "perch-mcp-filesystem", "perch-mcp-google", "perch-mcp-review", "perch-mcp-web"];

fn tier_of(name: &str) -> Option<usize> {
    let name = if MCP_SERVERS.contains(&name) { CAPABILITIES[0] } else { name };
    TIERS.iter().position(|(_, crates)| crates.contains(&name))
}

/// Each workspace crate and its Perch dependencies, with their kind ("normal", "dev", "build").
fn workspace() -> BTreeMap<String, Vec<(String, String)>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline", "--manifest-path"])
        .arg(root.join("Cargo.toml"))
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&out.stderr));
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("cargo metadata's JSON");
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
