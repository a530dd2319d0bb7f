//! Unguessable tokens (game ids, browser ids): 128 bits from the operating system's random
//! source, written as 32 lower-case hex digits. Nothing about them follows from the server's seed
//! or from the tokens given before.

/// A fresh token; an error when the operating system gives no random bytes.
pub fn new_token() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether `text` has the shape of a token (32 lower-case hex digits).
pub fn is_token(text: &str) -> bool {
    text.len() == 32 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_fresh_and_well_formed() {
        let a = new_token().unwrap();
        let b = new_token().unwrap();
        assert!(is_token(&a) && is_token(&b));
        assert_ne!(a, b);
        assert!(!is_token("0123") && !is_token(&a.to_uppercase()) && !is_token(&format!("{a}0")));
    }
}
