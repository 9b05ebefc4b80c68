//! Training positions in a compact binary form: 16 bytes each, so millions fit in memory and
//! on disk (a text line per position would take three times as much and parse slowly).
//!
//! A file is the 8-byte [`MAGIC`] followed by records:
//! bytes 0–7 the heights, base 5, square 0 lowest (5^25 < 2^64); 8–9 our pawns' squares and
//! 10–11 theirs ([`NO_PAWN`] for none); 12–13 the search score from the side to move's view
//! (little-endian i16, clamped to ±[`SCORE_CAP`]); 14 the game's result for the side to move
//! (1 won, 0 drawn, -1 lost, as i8); 15 flags (bit 0: the score is a proven result).

use super::features::{Board, NO_PAWN};

pub const MAGIC: &[u8; 8] = b"PZNNDAT1";
pub const RECORD_BYTES: usize = 16;
/// Scores are stored within ±this (a proven result as the cap itself).
pub const SCORE_CAP: i16 = 4000;

/// One labelled position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    pub board: Board,
    /// The search's score from the side to move's view.
    pub score: i16,
    /// The game's result for the side to move: 1, 0 or -1.
    pub result: i8,
    pub proven: bool,
}

/// Why a record does not decode.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SampleError {
    #[error("not a pillarz training file (it does not start with {MAGIC:?})")]
    Magic,
    #[error("the file ends inside a record ({0} bytes left over)")]
    Truncated(usize),
    #[error("record {index}: {reason}")]
    Bad { index: usize, reason: &'static str },
}

impl Sample {
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut heights = 0u64;
        for &h in self.board.heights.iter().rev() {
            heights = heights * 5 + u64::from(h);
        }
        out.extend_from_slice(&heights.to_le_bytes());
        out.extend_from_slice(&self.board.us);
        out.extend_from_slice(&self.board.them);
        out.extend_from_slice(&self.score.clamp(-SCORE_CAP, SCORE_CAP).to_le_bytes());
        out.push(self.result as u8);
        out.push(u8::from(self.proven));
    }

    pub fn decode(record: &[u8; RECORD_BYTES]) -> Result<Sample, &'static str> {
        let mut heights = u64::from_le_bytes(record[..8].try_into().expect("8 bytes"));
        let mut board = Board {
            heights: [0; 25],
            us: [record[8], record[9]],
            them: [record[10], record[11]],
        };
        for h in &mut board.heights {
            *h = (heights % 5) as u8;
            heights /= 5;
        }
        if heights != 0 {
            return Err("heights beyond 25 squares");
        }
        let pawns = board.us.iter().chain(&board.them);
        if pawns.clone().any(|&sq| sq != NO_PAWN && sq >= 25) {
            return Err("a pawn off the board");
        }
        if pawns
            .clone()
            .any(|&sq| sq != NO_PAWN && board.heights[usize::from(sq)] == 4)
        {
            return Err("a pawn on a cap");
        }
        let result = record[14] as i8;
        if !(-1..=1).contains(&result) {
            return Err("a result other than 1, 0 or -1");
        }
        let score = i16::from_le_bytes([record[12], record[13]]);
        if !(-SCORE_CAP..=SCORE_CAP).contains(&score) {
            return Err("a score beyond the cap");
        }
        if record[15] > 1 {
            return Err("unknown flags");
        }
        Ok(Sample {
            board,
            score,
            result,
            proven: record[15] == 1,
        })
    }
}

/// The samples of a whole file (magic included).
pub fn decode_all(bytes: &[u8]) -> Result<Vec<Sample>, SampleError> {
    let body = bytes
        .strip_prefix(MAGIC.as_slice())
        .ok_or(SampleError::Magic)?;
    let chunks = body.chunks_exact(RECORD_BYTES);
    if !chunks.remainder().is_empty() {
        return Err(SampleError::Truncated(chunks.remainder().len()));
    }
    chunks
        .enumerate()
        .map(|(index, chunk)| {
            Sample::decode(chunk.try_into().expect("a whole record"))
                .map_err(|reason| SampleError::Bad { index, reason })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_as_written() {
        let mut heights = [0; 25];
        for (i, h) in heights.iter_mut().enumerate() {
            *h = (i * 7 % 5) as u8;
        }
        heights[3] = 2;
        let sample = Sample {
            board: Board {
                heights,
                us: [3, 11],
                them: [NO_PAWN, 13],
            },
            score: -1234,
            result: -1,
            proven: true,
        };
        let mut bytes = MAGIC.to_vec();
        sample.encode(&mut bytes);
        sample.encode(&mut bytes);
        assert_eq!(bytes.len(), 8 + 2 * RECORD_BYTES);
        assert_eq!(decode_all(&bytes), Ok(vec![sample, sample]));
        assert_eq!(
            decode_all(&bytes[..bytes.len() - 1]),
            Err(SampleError::Truncated(RECORD_BYTES - 1))
        );
        assert_eq!(decode_all(&bytes[1..]), Err(SampleError::Magic));
        let mut bad = bytes.clone();
        bad[8 + RECORD_BYTES + 14] = 7;
        assert!(matches!(
            decode_all(&bad),
            Err(SampleError::Bad { index: 1, .. })
        ));
    }
}
