//! The programs outside Rust that some tests drive (a terminal, a browser,
//! the example bots' runtimes): found before a test starts, or the test
//! fails at once with one line that names the Debian package to install.

use std::path::{Path, PathBuf};

/// Each tool the tests use, with the Debian package that provides it.
pub const TOOLS: [(&str, &str); 10] = [
    ("tmux", "tmux"),
    ("chromium", "chromium"),
    ("python3", "python3"),
    ("node", "nodejs"),
    ("npm", "npm"),
    ("postgres", "postgresql"),
    ("redis-server", "redis-server"),
    ("haproxy", "haproxy"),
    ("cmake", "cmake"),
    ("g++", "g++"),
];

/// The Debian package that provides `tool`.
pub fn package(tool: &str) -> &str {
    TOOLS.iter().find(|(t, _)| *t == tool).map_or(tool, |(_, p)| *p)
}

/// Where `tool` is: on `PATH` (or in `/usr/sbin`, where Debian puts
/// `haproxy` and a user's `PATH` may not look), or for `chromium` at
/// `$CHROMIUM` when set.
pub fn find(tool: &str) -> Option<PathBuf> {
    if tool == "chromium" {
        if let Some(path) = std::env::var_os("CHROMIUM") {
            return Some(PathBuf::from(path)).filter(|p| p.is_file());
        }
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let sbin = std::iter::once(PathBuf::from("/usr/sbin"));
    std::env::split_paths(&path).chain(sbin).map(|dir| dir.join(tool)).find(|p| executable(p))
}

fn executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// Where `tool` is; a test that needs it and does not find it fails here,
/// before it starts anything, with one line: what is missing and how to
/// install it (`.ci/run` installs every one of them).
pub fn require(tool: &str) -> PathBuf {
    match find(tool) {
        Some(path) => path,
        None => panic!("{}", missing(tool)),
    }
}

/// Makes sure `python3` can `import websockets` (the Python example bot's
/// one package), installing it with pip when it is missing.
pub fn python_websockets() {
    require("python3");
    let python = || std::process::Command::new("python3");
    if python().args(["-c", "import websockets"]).output().is_ok_and(|out| out.status.success()) {
        return;
    }
    let out = python().args(["-m", "pip", "install", "--quiet", "websockets"]).output().expect("run pip");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "pip install websockets: {said}");
}

/// Rapfi's binary (the Gomocup brain the tests play): `$TTT_RAPFI`, else
/// `target/engines/pbrain-rapfi` in the workspace, built there on first use
/// from `../shared/engines` (about a minute; `.ci/run` builds it first). A
/// build that cannot be made fails the test at once saying why.
pub fn rapfi() -> String {
    if let Some(path) = std::env::var_os("TTT_RAPFI").map(PathBuf::from) {
        assert!(path.is_file(), "TTT_RAPFI names {}, which is not a file", path.display());
        return path.display().to_string();
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let path = root.join("target/engines/pbrain-rapfi");
    // Tests side by side wait for one build.
    static BUILT: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = BUILT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !path.is_file() {
        require("cmake");
        require("g++");
        let script = root.join("../shared/engines/build-rapfi.sh");
        let built = std::process::Command::new("bash")
            .arg(&script)
            .arg(root.join("target/engines"))
            .output()
            .unwrap_or_else(|e| panic!("{}: {e}", script.display()));
        assert!(
            built.status.success() && path.is_file(),
            "building Rapfi with {} failed (Debian packages cmake and g++): {}",
            script.display(),
            String::from_utf8_lossy(&built.stderr)
        );
    }
    path.display().to_string()
}

/// The line a missing `tool` fails with.
pub fn missing(tool: &str) -> String {
    let hint = if tool == "chromium" { " (or set CHROMIUM to a Chromium binary)" } else { "" };
    format!("this test needs `{tool}`, which is not installed: apt-get install {}{hint}", package(tool))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tool_is_one_line_naming_its_package() {
        assert_eq!(missing("node"), "this test needs `node`, which is not installed: apt-get install nodejs");
        assert_eq!(missing("tmux").lines().count(), 1);
        assert_eq!(package("haproxy"), "haproxy");
        assert!(find("sh").is_some(), "a shell is on PATH");
        assert!(find("no-such-tool-anywhere").is_none());
        let caught = std::panic::catch_unwind(|| require("no-such-tool-anywhere"));
        assert!(caught.is_err());
    }
}
