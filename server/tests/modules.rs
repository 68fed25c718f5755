//! The server's module graph has no circles: every `crate::…` and `super::…`
//! path in `server/src` is an edge from the file's module to the module it
//! names, and a module depends on its submodules. A submodule's references to
//! its own ancestors (using its parent's types) are its own structure, not an
//! edge; `lib.rs`, which wires everything together, is left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module path of a source file: `room/mod.rs` is `room`, `room/task.rs` is `room::task`.
fn module_of(rel: &Path) -> String {
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let file = parts.pop().unwrap_or_default();
    let stem = file.trim_end_matches(".rs");
    if stem != "mod" {
        parts.push(stem.to_owned());
    }
    parts.join("::")
}

fn files(dir: &Path, base: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).expect("read src").flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, base, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(base).expect("under src");
            let module = module_of(rel);
            // Test files (`tests.rs`) and the binary are not part of the graph.
            if module.ends_with("tests") || module == "main" || module == "lib" {
                continue;
            }
            out.push((module, std::fs::read_to_string(&path).expect("read file")));
        }
    }
}

/// The deepest known module that `path` (segments after `crate::`) names.
fn resolve(segments: &[&str], modules: &BTreeSet<String>) -> Option<String> {
    (1..=segments.len()).rev().map(|n| segments[..n].join("::")).find(|m| modules.contains(m))
}

fn is_ancestor(a: &str, of: &str) -> bool {
    of.starts_with(&format!("{a}::"))
}

/// Every `crate::x::y` and `super::x` path in `text`, as module-path segments.
fn references(module: &str, text: &str) -> Vec<Vec<String>> {
    let code: String =
        text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
    let mut refs = Vec::new();
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == ':';
    for (i, _) in code.match_indices("crate::").chain(code.match_indices("super::")) {
        // Inside a longer path (`super::super::x`, `a_crate::x`): counted from its start.
        if i > 0 && code[..i].chars().last().is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let path: String = code[i..].chars().take_while(|&c| word(c)).collect();
        for path in expand(&path, &code[i + path.len()..]) {
            refs.push(absolute(module, &path));
        }
    }
    refs
}

/// `prefix` as written, or each path of the brace group that follows it
/// (`crate::{a, b::{c, d}}` is `crate::a`, `crate::b::c`, `crate::b::d`).
fn expand(prefix: &str, rest: &str) -> Vec<String> {
    if !prefix.ends_with("::") || !rest.starts_with('{') {
        return vec![prefix.to_owned()];
    }
    let mut depth = 0;
    let mut items = Vec::new();
    let mut item = String::new();
    for c in rest.chars() {
        match c {
            '{' => {
                depth += 1;
                if depth == 1 {
                    continue;
                }
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    items.push(std::mem::take(&mut item));
                    break;
                }
            }
            ',' if depth == 1 => {
                items.push(std::mem::take(&mut item));
                continue;
            }
            _ => {}
        }
        item.push(c);
    }
    let mut out = Vec::new();
    for item in items.iter().map(|i| i.trim()).filter(|i| !i.is_empty()) {
        let head: String =
            item.chars().take_while(|&c| c.is_alphanumeric() || c == '_' || c == ':').collect();
        out.extend(expand(&format!("{prefix}{head}"), item[head.len()..].trim_start()));
    }
    out
}

/// The module-path segments `path` names from inside `module`.
fn absolute(module: &str, path: &str) -> Vec<String> {
    {
        let mut segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty() && *s != "self").collect();
        let mut base: Vec<String> = Vec::new();
        if segs.first() == Some(&"crate") {
            segs.remove(0);
        } else {
            // `super` is the parent of this file's module; a `mod.rs` is its own folder.
            base = module.split("::").map(String::from).collect();
            while segs.first() == Some(&"super") {
                segs.remove(0);
                base.pop();
            }
        }
        let mut full = base;
        full.extend(segs.iter().map(|s| s.to_string()));
        full
    }
}

/// The server's top-level modules, bottom to top: a module imports only
/// those before it (and `lib.rs`, which wires them, imports them all).
/// ARCHITECTURE.md states the same line.
const ORDER: [&str; 13] = [
    "core",
    "ratings",
    "store",
    "metrics",
    "house",
    "cmd",
    "room",
    "cluster",
    "config",
    "lobby",
    "tournament",
    "session",
    "net",
];

/// Every module's edges: the modules its code names, and its submodules.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &src, &mut all);
    let modules: BTreeSet<String> = all.iter().map(|(m, _)| m.clone()).collect();
    assert!(modules.contains("room") && modules.contains("session::membership"), "{modules:?}");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, text) in &all {
        let edges = graph.entry(module.clone()).or_default();
        for path in references(module, text) {
            let segs: Vec<&str> = path.iter().map(String::as_str).collect();
            let Some(target) = resolve(&segs, &modules) else { continue };
            if target != *module && !is_ancestor(&target, module) {
                edges.insert(target);
            }
        }
    }
    // A module holds its submodules: `room` depends on `room::seats`.
    for module in &modules {
        if let Some((parent, _)) = module.rsplit_once("::") {
            graph.entry(parent.to_owned()).or_default().insert(module.clone());
        }
    }
    graph
}

#[test]
fn no_import_runs_up_the_house() {
    let top = |m: &str| m.split("::").next().unwrap_or_default().to_owned();
    let rank = |m: &str| ORDER.iter().position(|&o| o == top(m));
    let graph = graph();
    let mut up = Vec::new();
    for (from, tos) in &graph {
        let Some(at) = rank(from) else { panic!("{from} is not in the order {ORDER:?}") };
        for to in tos {
            if rank(to).is_some_and(|r| r > at) {
                up.push(format!("{from} -> {to}"));
            }
        }
    }
    assert!(up.is_empty(), "imports that run up {ORDER:?}:\n{}", up.join("\n"));
    // The check is not vacuous: the layers lean on those below them.
    assert!(graph["room::task"].contains("core::queue"), "{graph:?}");
    assert!(graph["store"].iter().any(|m| m.starts_with("ratings")), "{graph:?}");
    let arch = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../ARCHITECTURE.md"))
        .expect("read ARCHITECTURE.md");
    let line = ORDER.map(|m| format!("`{m}`")).join(" → ");
    assert!(arch.contains(&line), "ARCHITECTURE.md states the order as {line}");
}

#[test]
fn the_server_modules_form_no_circle() {
    let graph = graph();
    // The graph is not vacuous: the edges the design relies on are seen.
    assert!(graph["room::task"].contains("cmd"), "{graph:?}");
    assert!(graph["room"].contains("room::seats"), "{graph:?}");
    assert!(graph["lobby"].contains("room"), "{graph:?}");

    assert!(graph["lobby::task"].contains("room::task"), "{graph:?}");
    // Depth-first search for a back edge.
    fn visit<'a>(
        node: &'a str,
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) {
        if done.contains(node) {
            return;
        }
        if let Some(at) = stack.iter().position(|&n| n == node) {
            panic!("import circle: {} -> {node}", stack[at..].join(" -> "));
        }
        stack.push(node);
        for next in graph.get(node).into_iter().flatten() {
            visit(next, graph, stack, done);
        }
        stack.pop();
        done.insert(node);
    }
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        visit(node, &graph, &mut Vec::new(), &mut done);
    }
}

#[test]
fn the_circle_check_sees_a_circle() {
    // Two files that name each other are reported (the check can fail).
    let modules: BTreeSet<String> = ["a".to_owned(), "b".to_owned()].into();
    let a = references("a", "use crate::b::Thing;");
    let b = references("b", "fn f() -> crate::a::Other { todo() }");
    let a_to = resolve(&a[0].iter().map(String::as_str).collect::<Vec<_>>(), &modules);
    let b_to = resolve(&b[0].iter().map(String::as_str).collect::<Vec<_>>(), &modules);
    assert_eq!((a_to.as_deref(), b_to.as_deref()), (Some("b"), Some("a")));
    // `super` from a submodule resolves to its parent's siblings.
    let s = references("room::task", "use super::Room; use super::super::cmd::X;");
    assert_eq!(s, vec![vec!["room".to_owned(), "Room".to_owned()], vec!["cmd".to_owned(), "X".to_owned()]]);
}
