//! Account tokens saved on this machine: one file per server in the user's
//! config directory (`$TTT_CONFIG_DIR`, else `$XDG_CONFIG_HOME/ttt`, else
//! `~/.config/ttt`), readable only by the user. `TTT_TOKEN` overrides them
//! (bots in CI).

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// An account saved for a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Saved {
    /// The account's name as registered.
    pub name: String,
    pub token: String,
    pub bot: bool,
}

/// Why an account could not be saved.
#[derive(Debug, thiserror::Error)]
pub enum AccountsError {
    /// Neither `HOME` nor `TTT_CONFIG_DIR` says where the config lives.
    #[error("no config directory: set HOME or TTT_CONFIG_DIR")]
    NoHome,
    /// The accounts file has no directory to live in.
    #[error("no config directory")]
    NoDirectory,
    /// The directory could not be made.
    #[error("cannot create {}: {error}", path.display())]
    Create { path: PathBuf, error: std::io::Error },
    /// The file could not be written.
    #[error("cannot write {}: {error}", path.display())]
    Write { path: PathBuf, error: std::io::Error },
}

impl From<AccountsError> for String {
    fn from(e: AccountsError) -> String {
        e.to_string()
    }
}

fn dir() -> Result<PathBuf, AccountsError> {
    if let Some(d) = std::env::var_os("TTT_CONFIG_DIR") {
        return Ok(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_CONFIG_HOME") {
        return Ok(PathBuf::from(d).join("ttt"));
    }
    std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".config").join("ttt"))
        .ok_or(AccountsError::NoHome)
}

/// A server's URL as a file name: every character that is not a letter or
/// digit made `_`.
fn server_key(server: &str) -> String {
    server.trim_end_matches('/').chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
}

/// The file of `server`'s accounts.
fn file(server: &str) -> Result<PathBuf, AccountsError> {
    Ok(dir()?.join("accounts").join(format!("{}.json", server_key(server))))
}

/// Every account saved for `servers` (the `--server` list: the accounts of
/// each URL in turn, the first of each name kept).
pub fn load(servers: &str) -> Vec<Saved> {
    let mut all: Vec<Saved> = Vec::new();
    for account in crate::servers::urls(servers).iter().flat_map(|url| load_one(url)) {
        if !all.iter().any(|a| a.name.to_lowercase() == account.name.to_lowercase()) {
            all.push(account);
        }
    }
    all
}

/// Every account saved for the one server at `server`.
fn load_one(server: &str) -> Vec<Saved> {
    let Ok(path) = file(server) else { return Vec::new() };
    let Ok(text) = std::fs::read_to_string(path) else { return Vec::new() };
    let Ok(doc) = serde_json::from_str::<Value>(&text) else { return Vec::new() };
    doc["accounts"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|a| {
                    Some(Saved {
                        name: a["name"].as_str()?.to_owned(),
                        token: a["token"].as_str()?.to_owned(),
                        bot: a["bot"].as_bool().unwrap_or(false),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Saves `account` for each of `servers` (the `--server` list; replacing
/// one of the same name), in files only the user can read; the first file.
pub fn save(servers: &str, account: &Saved) -> Result<PathBuf, AccountsError> {
    let mut first = None;
    for url in crate::servers::urls(servers) {
        let path = save_one(&url, account)?;
        first.get_or_insert(path);
    }
    first.ok_or(AccountsError::NoDirectory)
}

/// Saves `account` for the one server at `server`.
fn save_one(server: &str, account: &Saved) -> Result<PathBuf, AccountsError> {
    let path = file(server)?;
    let parent = path.parent().ok_or(AccountsError::NoDirectory)?;
    std::fs::create_dir_all(parent)
        .map_err(|error| AccountsError::Create { path: parent.to_owned(), error })?;
    let mut all = load_one(server);
    all.retain(|a| a.name.to_lowercase() != account.name.to_lowercase());
    all.push(account.clone());
    let doc = json!({"accounts": all.iter().map(|a| json!({"name": a.name, "token": a.token, "bot": a.bot})).collect::<Vec<_>>()});
    let tmp = path.with_extension("tmp");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut f = options.open(&tmp).map_err(|error| write_error(&tmp, error))?;
    f.write_all(format!("{doc:#}\n").as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(|error| write_error(&tmp, error))?;
    std::fs::rename(&tmp, &path).map_err(|error| write_error(&path, error))?;
    Ok(path)
}

fn write_error(path: &Path, error: std::io::Error) -> AccountsError {
    AccountsError::Write { path: path.to_owned(), error }
}

/// The token to sign in as `name` on `server`: `TTT_TOKEN` if set, else the
/// saved account of that name (ignoring case).
pub fn token_for(server: &str, name: &str) -> Option<String> {
    if let Ok(t) = std::env::var("TTT_TOKEN") {
        if !t.is_empty() {
            return Some(t);
        }
    }
    load(server).into_iter().find(|a| a.name.to_lowercase() == name.to_lowercase()).map(|a| a.token)
}

/// The name `ttt play` and `ttt challenge` play under when none is given:
/// the person's account saved last for `server` (not a bot account), if any.
pub fn default_player(server: &str) -> Option<String> {
    load(server).into_iter().rev().find(|a| !a.bot).map(|a| a.name)
}

/// The name of the one account saved for `server`, when there is exactly one.
pub fn only_name(server: &str) -> Option<String> {
    let all = load(server);
    match all.as_slice() {
        [one] => Some(one.name.clone()),
        _ => None,
    }
}
