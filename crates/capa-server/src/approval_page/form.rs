//! A form-urlencoded body, decoded without another dependency.

/// The fields of a form-urlencoded body (`+` is a space, `%XX` a byte).
pub(super) fn fields(body: &[u8]) -> Vec<(String, String)> {
    fn decode(text: &[u8]) -> String {
        let mut out = Vec::with_capacity(text.len());
        let mut i = 0;
        while i < text.len() {
            match text[i] {
                b'+' => out.push(b' '),
                b'%' if i + 2 < text.len() => {
                    let hex = std::str::from_utf8(&text[i + 1..i + 3]).ok();
                    match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                        Some(byte) => {
                            out.push(byte);
                            i += 2;
                        }
                        None => out.push(b'%'),
                    }
                }
                byte => out.push(byte),
            }
            i += 1;
        }
        String::from_utf8_lossy(&out).into_owned()
    }
    body.split(|b| *b == b'&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let mut halves = pair.splitn(2, |b| *b == b'=');
            let name = decode(halves.next().unwrap_or_default());
            let value = decode(halves.next().unwrap_or_default());
            (name, value)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_decode_plus_and_percent() {
        let decoded = fields(b"approval=ap%5F1&choice=approve_once&csrf=a+b%zz&&flag");
        assert_eq!(
            decoded,
            [
                ("approval".to_owned(), "ap_1".to_owned()),
                ("choice".to_owned(), "approve_once".to_owned()),
                ("csrf".to_owned(), "a b%zz".to_owned()),
                ("flag".to_owned(), String::new()),
            ]
        );
        assert_eq!(fields(b"x=%4"), [("x".to_owned(), "%4".to_owned())]);
    }
}
