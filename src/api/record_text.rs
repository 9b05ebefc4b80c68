//! A game record as text a person can read, archive and paste back: tag lines in the manner
//! of chess's PGN, then the numbered moves with the clocks after each. The `Position` tag is
//! what `POST /v1/games` takes as `position` to start a new game from where this one stands.

use std::fmt::Write;

use super::{GameRecord, Seat};

fn rfc3339(ms: u64) -> String {
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms);
    humantime::format_rfc3339_millis(at).to_string()
}

fn name<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

impl GameRecord {
    /// The record as text.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let mut tag = |key: &str, value: &str| {
            let _ = writeln!(out, "[{key} \"{}\"]", value.replace('"', "'"));
        };
        tag("Game", &name(&self.game));
        tag("Id", &self.id);
        if !self.variants.is_empty() {
            let names: Vec<String> = self.variants.iter().map(name).collect();
            tag("Variants", &names.join(","));
        }
        tag("Date", &rfc3339(self.created_at));
        match &self.time_control {
            Some(tc) => tag(
                "TimeControl",
                &format!("{}+{}", tc.initial_ms, tc.increment_ms),
            ),
            None => tag("TimeControl", "-"),
        }
        tag("Start", &self.start_position);
        tag("Position", &self.position);
        tag(
            "Result",
            &self.result.as_ref().map_or("*".to_string(), name),
        );
        if let Some(termination) = &self.termination {
            tag("Termination", &name(termination));
        }
        if let Some(seat) = &self.ended_by {
            tag("EndedBy", &name(seat));
        }
        out.push('\n');
        let mut line = String::new();
        for m in &self.moves {
            let mut entry = format!("{}. {}", m.ply, m.mv);
            if let Some(clocks) = &m.remaining_ms {
                let secs = |seat| clocks.get(&seat).map_or(0.0, |ms| *ms as f64 / 1000.0);
                let _ = write!(
                    entry,
                    " {{p1 {:.1}s p2 {:.1}s}}",
                    secs(Seat::P1),
                    secs(Seat::P2)
                );
            }
            if !line.is_empty() && line.len() + entry.len() >= 80 {
                out.push_str(&line);
                out.push('\n');
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(&entry);
        }
        if !line.is_empty() {
            out.push_str(&line);
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::super::{GameKind, GameResult, RecordMove, Status, TerminationKind, TimeControl};
    use super::*;

    #[test]
    fn a_record_reads_as_tags_then_numbered_moves_with_clocks() {
        let record = GameRecord {
            id: "7b0d5c8e-3f51-4a8e-9a8c-2c1a0e3f9d11".into(),
            game: GameKind::Pillarz,
            variants: vec![],
            created_at: 1_764_571_234_567,
            time_control: Some(TimeControl {
                initial_ms: 60_000,
                increment_ms: 1_000,
            }),
            start_position: "start".into(),
            moves: vec![RecordMove {
                ply: 1,
                seat: Seat::P1,
                mv: "b1+d1".into(),
                at: 1_764_571_236_000,
                remaining_ms: Some(BTreeMap::from([(Seat::P1, 59_567), (Seat::P2, 60_000)])),
            }],
            position: "after".into(),
            status: Status::Finished,
            result: Some(GameResult::Player(Seat::P2)),
            termination: Some(TerminationKind::Resign),
            ended_at: Some(1_764_571_237_000),
            ended_by: Some(Seat::P1),
        };
        assert_eq!(
            record.to_text(),
            "[Game \"pillarz\"]\n[Id \"7b0d5c8e-3f51-4a8e-9a8c-2c1a0e3f9d11\"]\n\
             [Date \"2025-12-01T06:40:34.567Z\"]\n[TimeControl \"60000+1000\"]\n\
             [Start \"start\"]\n[Position \"after\"]\n[Result \"p2\"]\n\
             [Termination \"resign\"]\n[EndedBy \"p1\"]\n\n1. b1+d1 {p1 59.6s p2 60.0s}\n"
        );
    }
}
