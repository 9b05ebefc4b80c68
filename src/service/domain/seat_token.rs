//! A seat's secret bearer token. Only its SHA-256 is stored, so a leaked store does not leak
//! the right to move.

use rand::RngCore;
use sha2::{Digest, Sha256};

#[derive(Clone, PartialEq, Eq)]
pub struct SeatToken(String);

impl std::fmt::Debug for SeatToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SeatToken(…)")
    }
}

impl SeatToken {
    /// A fresh token: 32 random bytes from the OS-seeded generator, hex-encoded.
    pub fn generate() -> SeatToken {
        let mut bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut bytes);
        SeatToken(hex::encode(bytes))
    }

    /// From an `Authorization` header value: `Bearer <64 hex digits>`, the scheme's name in
    /// any case (RFC 9110, 11.1: `bearer` and `BEARER` are the same scheme).
    pub fn from_authorization(header: &str) -> Option<SeatToken> {
        let (scheme, token) = header.split_once(' ')?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return None;
        }
        let token = token.trim();
        (token.len() == 64 && token.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| SeatToken(token.to_ascii_lowercase()))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    /// What the store keeps: the first 128 bits of the token's SHA-256, in hex. The token has
    /// 256 random bits, so no one can find a token for a digest.
    pub fn digest(&self) -> String {
        hex::encode(&Sha256::digest(self.0.as_bytes())[..16])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

    #[test]
    fn the_scheme_is_read_in_any_case() {
        for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
            let token = SeatToken::from_authorization(&format!("{scheme} {HEX}"));
            assert_eq!(token.map(|t| t.0), Some(HEX.to_string()), "{scheme}");
        }
        for refused in [
            format!("Basic {HEX}"),
            format!("Bearer{HEX}"),
            format!("Bearerx {HEX}"),
            format!("Bearer {}", &HEX[1..]),
            "Bearer".to_string(),
            String::new(),
        ] {
            assert!(
                SeatToken::from_authorization(&refused).is_none(),
                "{refused}"
            );
        }
    }
}
