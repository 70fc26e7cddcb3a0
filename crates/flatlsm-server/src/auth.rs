//! Password checks. Both sides are hashed with SHA-256 and the digests compared in constant
//! time (`subtle`), so neither the password's length nor how much of a guess matched shows in
//! the time a check takes (redis-server hashes both sides for the same reason).

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The configured password, kept as its digest.
pub struct Password {
    digest: [u8; 32],
}

impl Password {
    /// The password clients must give.
    pub fn new(password: &str) -> Password {
        Password {
            digest: Sha256::digest(password.as_bytes()).into(),
        }
    }

    /// Whether `guess` is the password (constant time).
    pub fn check(&self, guess: &[u8]) -> bool {
        let digest: [u8; 32] = Sha256::digest(guess).into();
        self.digest.ct_eq(&digest).into()
    }
}

#[cfg(test)]
mod tests {
    use super::Password;

    #[test]
    fn only_the_exact_password_passes() {
        let p = Password::new("s3cret");
        assert!(p.check(b"s3cret"));
        assert!(!p.check(b"s3cre"));
        assert!(!p.check(b"s3cret "));
        assert!(!p.check(b""));
    }
}
