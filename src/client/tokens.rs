//! The local token file: seat tokens saved by `pillarz new`, so later commands need no
//! copy-paste. JSON `{"<game id>": {"p1": "<token>", ...}}`, at `$PILLARZ_TOKENS` or
//! `$XDG_STATE_HOME/pillarz/tokens.json` (default `~/.local/state/pillarz/tokens.json`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::api::Seat;

pub type Tokens = BTreeMap<String, BTreeMap<Seat, String>>;

pub fn default_path() -> PathBuf {
    if let Some(path) = std::env::var_os("PILLARZ_TOKENS") {
        return PathBuf::from(path);
    }
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
        .unwrap_or_else(|| PathBuf::from("."));
    state.join("pillarz/tokens.json")
}

pub fn load(path: &PathBuf) -> Result<Tokens, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            serde_json::from_str(&text).map_err(|e| format!("token file {}: {e}", path.display()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Tokens::new()),
        Err(e) => Err(format!("token file {}: {e}", path.display())),
    }
}

/// Adds a game's tokens to the file (created with owner-only permissions).
pub fn save(path: &PathBuf, game: &str, seats: &BTreeMap<Seat, String>) -> Result<(), String> {
    let mut all = load(path)?;
    all.insert(game.to_string(), seats.clone());
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let text = serde_json::to_string_pretty(&all).expect("tokens serialize");
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).map_err(|e| format!("{}: {e}", tmp.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600));
    }
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))
}
