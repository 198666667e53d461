//! Bytes as lower-case hex: digests and random ids. On the path of every guest call (the
//! journal's call digest), so written out by a table, not a `format!` per byte.

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// `bytes` as lower-case hex, two digits a byte.
pub fn lower_hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::lower_hex;

    #[test]
    fn every_byte_is_two_lower_case_digits_as_format_writes_them() {
        let bytes: Vec<u8> = (0..=255).collect();
        let expected: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(lower_hex(&bytes), expected);
        assert_eq!(lower_hex(&[]), "");
    }
}
