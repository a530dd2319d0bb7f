//! The crate graph of docs/architecture.md is the one the `Cargo.toml` files declare: each
//! crate's row names exactly its workspace dependencies (normal ones: dev-dependencies are the
//! tests'), and every dependency is a crate of an earlier row, so the order is one-way.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The workspace crates that `manifest` lists under `[dependencies]` (and its target-specific
/// `dependencies` tables), without the `zertz-` prefix.
fn workspace_dependencies(manifest: &str) -> Vec<String> {
    let mut section = "";
    let mut found = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
            continue;
        }
        let normal = section == "[dependencies]"
            || (section.starts_with("[target.") && section.ends_with(".dependencies]"));
        if let Some(rest) = line.strip_prefix("zertz-").filter(|_| normal) {
            let name: String =
                rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
            found.push(name);
        }
    }
    found.sort();
    found
}

/// The package name of `manifest`.
fn package_name(manifest: &str) -> String {
    let line = manifest.lines().find(|l| l.starts_with("name = ")).expect("a name");
    line.trim_start_matches("name = ").trim_matches('"').to_string()
}

#[test]
fn the_documented_crate_graph_is_the_declared_one() {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let start = doc.find("<!-- crate graph").expect("docs/architecture.md holds the crate graph");
    let end = doc.find("<!-- end of the crate graph -->").expect("the graph's end");
    let mut documented: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut order = Vec::new();
    for row in doc[start..end].lines().filter(|l| l.starts_with("| `zertz-")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let name = cells[1].trim_matches('`').to_string();
        let mut deps: Vec<String> = if cells[2].starts_with('(') {
            Vec::new()
        } else {
            cells[2].split(',').map(|d| d.trim().to_string()).collect()
        };
        for dep in &deps {
            assert!(
                order.contains(&format!("zertz-{dep}")),
                "docs/architecture.md: {name} depends on {dep}, which is not in an earlier row"
            );
        }
        deps.sort();
        order.push(name.clone());
        documented.insert(name, deps);
    }

    let members = [
        "env",
        "settings",
        "archive",
        "vecenv",
        "search",
        "selfplay",
        "arena",
        "model",
        "jobs",
        "serve",
        "cli",
        "fuzzkit",
        "python",
        "python/engine",
        "python/common",
    ];
    let mut declared = BTreeMap::new();
    for member in members {
        let manifest = std::fs::read_to_string(root().join(member).join("Cargo.toml")).unwrap();
        declared.insert(package_name(&manifest), workspace_dependencies(&manifest));
    }
    let workspace = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let listed = workspace.lines().find(|l| l.starts_with("members = ")).expect("the members");
    for member in listed.split('"').skip(1).step_by(2) {
        assert!(members.contains(&member), "a member this test does not read: {member}");
    }
    assert_eq!(
        documented, declared,
        "docs/architecture.md's crate graph (left) differs from the Cargo.toml files (right)"
    );
}
