//! The engine protocol's text: commands a driver sends to `pillarz engine` and the lines the
//! engine answers with. Parsing and formatting only, so the engine loop and the match runner's
//! external-engine client agree on one grammar.
//!
//! ```text
//! newgame <game> [<variant>...]          a new game; forgets everything learned so far
//! position startpos [moves <m>...]       the game's start, then these moves
//! position <notation> [moves <m>...]     any position in the game's notation, then moves
//! go [depth <n> | nodes <n> | movetime <ms> | infinite] [multipv <k>]
//! stop                                   finish the search now and answer bestmove
//! isready                                answered by readyok
//! quit
//! ```
//! The engine answers a search with `info …` lines and one
//! `bestmove <move> score <value n | win n | loss n | draw> depth <d> nodes <n> time <ms> pv <moves…>`
//! (`bestmove none …` when the side to move has no move), and a refused command with
//! `error <reason>`.

use crate::engine::{Limit, Score};

/// One command of the protocol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    NewGame {
        game: String,
        variants: Vec<String>,
    },
    /// `start` is `None` for `startpos`.
    Position {
        start: Option<String>,
        moves: Vec<String>,
    },
    /// `limit` is `None` for `go infinite` (search until `stop`).
    Go {
        limit: Option<Limit>,
        multipv: usize,
    },
    Stop,
    IsReady,
    Quit,
}

/// Why a line is not a command.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    #[error("empty line")]
    Empty,
    #[error("unknown command {0:?}")]
    Unknown(String),
    #[error("{command}: {reason}")]
    Bad {
        command: &'static str,
        reason: String,
    },
}

fn bad(command: &'static str, reason: impl Into<String>) -> CommandError {
    CommandError::Bad {
        command,
        reason: reason.into(),
    }
}

fn number<T: std::str::FromStr>(
    command: &'static str,
    name: &str,
    value: Option<&str>,
) -> Result<T, CommandError> {
    value
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| bad(command, format!("{name} needs a whole number")))
}

impl std::str::FromStr for Command {
    type Err = CommandError;

    fn from_str(line: &str) -> Result<Command, CommandError> {
        let mut words = line.split_whitespace();
        let name = words.next().ok_or(CommandError::Empty)?;
        let rest: Vec<&str> = words.collect();
        match name {
            "newgame" => {
                let (game, variants) = rest
                    .split_first()
                    .ok_or_else(|| bad("newgame", "name the game"))?;
                Ok(Command::NewGame {
                    game: game.to_string(),
                    variants: variants.iter().map(ToString::to_string).collect(),
                })
            }
            "position" => {
                let split = rest.iter().position(|w| *w == "moves");
                let (head, moves) = match split {
                    Some(i) => (&rest[..i], &rest[i + 1..]),
                    None => (&rest[..], &[][..]),
                };
                let start = match head {
                    [] => return Err(bad("position", "expected startpos or a position")),
                    ["startpos"] => None,
                    words => Some(words.join(" ")),
                };
                Ok(Command::Position {
                    start,
                    moves: moves.iter().map(ToString::to_string).collect(),
                })
            }
            "go" => {
                let mut limit = Some(Limit::Depth(crate::engine::limits::MAX_PLY));
                let mut multipv = 1;
                let mut it = rest.into_iter();
                while let Some(word) = it.next() {
                    match word {
                        "depth" => limit = Some(Limit::Depth(number("go", word, it.next())?)),
                        "nodes" => limit = Some(Limit::Nodes(number("go", word, it.next())?)),
                        "movetime" => {
                            limit = Some(Limit::MovetimeMs(number("go", word, it.next())?))
                        }
                        "infinite" => limit = None,
                        "multipv" => multipv = number("go", word, it.next())?,
                        other => return Err(bad("go", format!("unknown argument {other:?}"))),
                    }
                }
                Ok(Command::Go { limit, multipv })
            }
            "stop" => Ok(Command::Stop),
            "isready" => Ok(Command::IsReady),
            "quit" => Ok(Command::Quit),
            other => Err(CommandError::Unknown(other.to_string())),
        }
    }
}

/// A score as the protocol writes it: `value 12`, `win 5`, `loss 4` or `draw`.
pub fn format_score(score: Score) -> String {
    match score {
        Score::Value(v) => format!("value {v}"),
        Score::WinIn(n) => format!("win {n}"),
        Score::LossIn(n) => format!("loss {n}"),
        Score::Draw => "draw".to_string(),
    }
}

/// The move of a `bestmove` line (`None` for `bestmove none`), or `None` if the line is not one.
pub fn parse_bestmove(line: &str) -> Option<Option<String>> {
    let mut words = line.split_whitespace();
    if words.next()? != "bestmove" {
        return None;
    }
    match words.next()? {
        "none" => Some(None),
        mv => Some(Some(mv.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_command() {
        assert_eq!(
            "newgame pilastri size-8".parse(),
            Ok(Command::NewGame {
                game: "pilastri".into(),
                variants: vec!["size-8".into()]
            })
        );
        assert_eq!(
            "position startpos moves a1+b2 c3+d4".parse(),
            Ok(Command::Position {
                start: None,
                moves: vec!["a1+b2".into(), "c3+d4".into()]
            })
        );
        assert_eq!(
            "position b5,c4,d1,e4,e8,f3,h7,i6 b8 h4 1 e8".parse(),
            Ok(Command::Position {
                start: Some("b5,c4,d1,e4,e8,f3,h7,i6 b8 h4 1 e8".into()),
                moves: vec![]
            })
        );
        assert_eq!(
            "go movetime 250 multipv 3".parse(),
            Ok(Command::Go {
                limit: Some(Limit::MovetimeMs(250)),
                multipv: 3
            })
        );
        assert_eq!(
            "go infinite".parse(),
            Ok(Command::Go {
                limit: None,
                multipv: 1
            })
        );
        assert_eq!("stop".parse(), Ok(Command::Stop));
        assert!(matches!(
            "go depth x".parse::<Command>(),
            Err(CommandError::Bad { command: "go", .. })
        ));
        assert!(matches!(
            "position".parse::<Command>(),
            Err(CommandError::Bad { .. })
        ));
        assert_eq!(
            "fly".parse::<Command>(),
            Err(CommandError::Unknown("fly".into()))
        );
    }

    #[test]
    fn writes_every_score() {
        assert_eq!(format_score(Score::Value(-12)), "value -12");
        assert_eq!(format_score(Score::WinIn(5)), "win 5");
        assert_eq!(format_score(Score::LossIn(4)), "loss 4");
        assert_eq!(format_score(Score::Draw), "draw");
    }

    #[test]
    fn reads_bestmove_lines() {
        assert_eq!(
            parse_bestmove("bestmove b2-c3^d4 score win 3 pv b2-c3^d4"),
            Some(Some("b2-c3^d4".into()))
        );
        assert_eq!(parse_bestmove("bestmove none score loss 0"), Some(None));
        assert_eq!(parse_bestmove("info depth 3"), None);
    }
}
