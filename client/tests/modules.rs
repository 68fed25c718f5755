//! The client's modules stand in one order, bottom to top, and no import runs
//! up it or round a circle. Every `crate::…` and `super::…` path in
//! `client/src` is an edge from the file's module to the deepest module it
//! names, and a module depends on its submodules. A submodule naming its own
//! ancestors (its parent's types) is its own structure, not an edge; test
//! files (`tests.rs`) and `main.rs`, which wires the commands together, are
//! left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The client's top-level modules, bottom to top (as ARCHITECTURE.md lists
/// them, with `fixtures`, the unit tests' data, at the bottom too): a module
/// imports only from floors below its own; the modules of one floor do not
/// import each other.
const ORDER: &[&[&str]] = &[
    &["fixtures", "request", "tls", "bot", "judge_cmd"],
    &["say"],
    &["servers", "view"],
    &["seats", "accounts", "api", "tournament"],
    &["net"],
    &["session"],
    &["ui", "who_cmd", "bot_cmd"],
    &["records_cmd", "arena", "tournament_cmd"],
    &["error", "cli"],
];

type Graph = BTreeMap<String, BTreeSet<String>>;

/// The module a source file holds: `net/mod.rs` is `net`, `net/tls.rs` is `net::tls`.
fn module_of(rel: &Path) -> String {
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if let Some(file) = parts.pop() {
        let stem = file.trim_end_matches(".rs");
        if stem != "mod" {
            parts.push(stem.to_owned());
        }
    }
    parts.join("::")
}

/// Every module of the graph under `dir`, with its source text.
fn sources(dir: &Path, src: &Path, out: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).expect("read client/src").flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, src, out);
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let module = module_of(path.strip_prefix(src).expect("a file under src"));
        if module == "main" || module == "lib" || module == "tests" || module.ends_with("::tests") {
            continue;
        }
        out.insert(module, std::fs::read_to_string(&path).expect("read a source file"));
    }
}

/// The module paths `text` (the source of `module`) names through
/// `crate::` or `super::`, as segments from the crate's root; comments are
/// left out.
fn named_paths(module: &str, text: &str) -> Vec<Vec<String>> {
    let code: Vec<&str> = text.lines().filter(|l| !l.trim_start().starts_with("//")).collect();
    let code = code.join("\n");
    let in_path = |c: char| c.is_alphanumeric() || c == '_' || c == ':';
    let mut found = Vec::new();
    for start in ["crate::", "super::"] {
        for (at, _) in code.match_indices(start) {
            // A path continued (`super::super::`, `my_crate::`) is read from its start.
            if code[..at].chars().next_back().is_some_and(in_path) {
                continue;
            }
            let path: String = code[at..].chars().take_while(|&c| in_path(c)).collect();
            let mut segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
            let mut from_root: Vec<String> = Vec::new();
            if segments[0] == "crate" {
                segments.remove(0);
            } else {
                // `super` of a module is its parent; the file `x/mod.rs` is `x` itself.
                from_root = module.split("::").map(str::to_owned).collect();
                while segments.first() == Some(&"super") {
                    segments.remove(0);
                    from_root.pop();
                }
            }
            from_root.extend(segments.into_iter().map(str::to_owned));
            found.push(from_root);
        }
    }
    found
}

/// The deepest module of `modules` that `path` names, if any.
fn target(path: &[String], modules: &BTreeSet<String>) -> Option<String> {
    (1..=path.len()).rev().map(|n| path[..n].join("::")).find(|m| modules.contains(m))
}

/// The import graph of `sources` (module → its text).
fn graph(sources: &BTreeMap<String, String>) -> Graph {
    let modules: BTreeSet<String> = sources.keys().cloned().collect();
    let mut graph: Graph = modules.iter().map(|m| (m.clone(), BTreeSet::new())).collect();
    for (module, text) in sources {
        for path in named_paths(module, text) {
            let Some(to) = target(&path, &modules) else { continue };
            let ancestor = module.starts_with(&format!("{to}::"));
            if to != *module && !ancestor {
                graph.entry(module.clone()).or_default().insert(to);
            }
        }
        // A module holds its submodules.
        if let Some((parent, _)) = module.rsplit_once("::") {
            graph.entry(parent.to_owned()).or_default().insert(module.clone());
        }
    }
    graph
}

/// The first circle found in `graph`, as the modules along it.
fn circle(graph: &Graph) -> Option<Vec<String>> {
    fn walk<'a>(
        node: &'a str,
        graph: &'a Graph,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|&n| n == node) {
            let mut round: Vec<String> = path[at..].iter().map(|n| n.to_string()).collect();
            round.push(node.to_owned());
            return Some(round);
        }
        if !done.insert(node) {
            return None;
        }
        path.push(node);
        for next in graph.get(node).into_iter().flatten() {
            if let Some(round) = walk(next, graph, path, done) {
                return Some(round);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|node| walk(node, graph, &mut Vec::new(), &mut done))
}

/// The floor of a module in [`ORDER`]: the floor of its top-level module.
fn floor(module: &str) -> Option<usize> {
    let top = module.split("::").next().unwrap_or(module);
    ORDER.iter().position(|floor| floor.contains(&top))
}

/// Every import in `graph` that does not point to a lower floor, as
/// `from -> to`; a module with no floor is named too.
fn against_the_order(graph: &Graph) -> Vec<String> {
    let mut wrong = Vec::new();
    for (from, tos) in graph {
        let Some(here) = floor(from) else {
            wrong.push(format!("{from} has no place in ORDER"));
            continue;
        };
        for to in tos {
            let same_top = from.split("::").next() == to.split("::").next();
            match floor(to) {
                _ if same_top => {}
                Some(there) if there < here => {}
                _ => wrong.push(format!("{from} -> {to}")),
            }
        }
    }
    wrong
}

fn client_graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = BTreeMap::new();
    sources(&src, &src, &mut all);
    graph(&all)
}

#[test]
fn the_client_modules_form_no_circle() {
    let graph = client_graph();
    // The graph is read, not empty: edges the client is built on are seen.
    assert!(graph["session"].contains("net"), "{graph:?}");
    assert!(graph["net"].contains("net::machine"), "{graph:?}");
    assert!(graph["ui::screen"].contains("ui::board"), "{graph:?}");
    assert!(graph["bot_cmd::state"].contains("view"), "{graph:?}");
    if let Some(round) = circle(&graph) {
        panic!("import circle: {}", round.join(" -> "));
    }
}

#[test]
fn no_client_import_runs_up_the_order() {
    let wrong = against_the_order(&client_graph());
    assert!(wrong.is_empty(), "imports against ORDER (bottom to top {ORDER:?}):\n{}", wrong.join("\n"));
}

#[test]
fn the_checks_see_a_circle_and_an_import_up_the_order() {
    let sources: BTreeMap<String, String> = [
        ("say".to_owned(), "fn f(link: &crate::net::Link) {}".to_owned()),
        ("net".to_owned(), "use crate::say::clean;".to_owned()),
        ("net::machine".to_owned(), "use super::super::say::closed; use super::Link;".to_owned()),
    ]
    .into();
    let graph = graph(&sources);
    assert_eq!(
        graph["net::machine"],
        ["say".to_owned()].into(),
        "`super::super` is the root; a parent is no edge"
    );
    assert!(graph["net"].contains("net::machine"), "a module holds its submodules");
    let round = circle(&graph).expect("say and net name each other");
    assert!(round.contains(&"say".to_owned()) && round.contains(&"net".to_owned()), "{round:?}");
    assert_eq!(against_the_order(&graph), ["say -> net".to_owned()]);
}
