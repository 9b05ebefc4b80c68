//! The `Idempotency-Key` header: 1–128 visible ASCII characters without spaces.

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdempotencyKey(String);

impl IdempotencyKey {
    pub fn parse(s: &str) -> Result<IdempotencyKey, String> {
        if s.is_empty() || s.len() > 128 || !s.bytes().all(|b| b.is_ascii_graphic()) {
            return Err("Idempotency-Key must be 1 to 128 visible ASCII characters".into());
        }
        Ok(IdempotencyKey(s.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}
