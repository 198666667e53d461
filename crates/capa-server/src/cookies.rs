//! The session cookies of the web UI and the approval page, and what else a session request must
//! bring. Browsers send a cookie to every port of a host, so a cookie alone would let any other
//! service on 127.0.0.1 that the browser visits act as the person (it could replay the cookie
//! from its own code, with any headers it likes). So a session is two halves: the cookie
//! (`HttpOnly`, `SameSite=Strict`, its name carrying the hub's port) and a key that stays on the
//! hub's own origin — in the UI's storage (sent as a header) or in the approval page's URL
//! (sent only to this origin under `Referrer-Policy: same-origin`). Every session request,
//! reads included, needs both. A value another port planted under the same name is ignored
//! unless it too is a live session (then which one is ours cannot be told, and both are
//! refused).

use axum::http::{HeaderMap, Uri, header};

/// A cookie's name for the hub on `port`: `capa_ui_4477`.
pub(crate) fn name(base: &str, port: u16) -> String {
    format!("{base}_{port}")
}

/// Every value of cookie `name` across the `Cookie` headers. Another port may have planted
/// one under the same name; callers keep the values that are live sessions and refuse only
/// when more than one is (a planted stale value must not lock the person out).
pub(crate) fn values<'a>(headers: &'a HeaderMap, name: &str) -> Vec<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|h| h.to_str().ok())
        .flat_map(|h| h.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .filter(|(n, _)| *n == name)
        .map(|(_, value)| value)
        .collect()
}

/// Of `values`, the one that `live` accepts: `Ok(None)` when none does, `Err(())` when two
/// different values do (which the hub set cannot be told).
pub(crate) fn the_live_one<'a>(
    values: &[&'a str],
    live: impl Fn(&str) -> bool,
) -> Result<Option<&'a str>, ()> {
    let mut found: Option<&'a str> = None;
    for value in values.iter().copied().filter(|v| live(v)) {
        match found {
            Some(earlier) if earlier != value => return Err(()),
            _ => found = Some(value),
        }
    }
    Ok(found)
}

/// Whether the browser says the request comes from the hub's own pages (`Sec-Fetch-Site`;
/// clients that are not browsers send none). `navigation_ok` also takes `none`: a page the
/// person opened or reloaded themselves.
pub(crate) fn from_own_site(headers: &HeaderMap, navigation_ok: bool) -> bool {
    match headers
        .get("sec-fetch-site")
        .map(|v| v.to_str().unwrap_or_default())
    {
        None | Some("same-origin") => true,
        Some("none") => navigation_ok,
        Some(_) => false,
    }
}

/// The value of `name` in the query of `uri` (hex keys only: no decoding needed).
pub(crate) fn query_param<'a>(uri: &'a Uri, name: &str) -> Option<&'a str> {
    uri.query()?.split('&').find_map(|pair| {
        pair.split_once('=')
            .filter(|(n, _)| *n == name)
            .map(|(_, v)| v)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(cookies: &[&'static str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for c in cookies {
            map.append(header::COOKIE, HeaderValue::from_static(c));
        }
        map
    }

    #[test]
    fn a_planted_value_is_ignored_and_two_live_ones_refused() {
        let name = "capa_ui_4477";
        assert_eq!(
            values(&headers(&["a=1; capa_ui_4477=abc; b=2"]), name),
            ["abc"]
        );
        assert!(values(&headers(&["capa_ui_4478=abc"]), name).is_empty());
        let sent = headers(&["capa_ui_4477=mine", "capa_ui_4477=planted"]);
        let both = values(&sent, name);
        assert_eq!(both, ["mine", "planted"]);
        assert_eq!(the_live_one(&both, |v| v == "mine"), Ok(Some("mine")));
        assert_eq!(the_live_one(&both, |_| true), Err(()));
        assert_eq!(the_live_one(&["same", "same"], |_| true), Ok(Some("same")));
        assert_eq!(the_live_one(&both, |_| false), Ok(None));
    }

    #[test]
    fn only_the_hubs_own_pages_count_as_its_site() {
        let with = |v: &'static str| {
            let mut map = HeaderMap::new();
            map.insert("sec-fetch-site", HeaderValue::from_static(v));
            map
        };
        assert!(from_own_site(&HeaderMap::new(), false));
        assert!(from_own_site(&with("same-origin"), false));
        assert!(!from_own_site(&with("same-site"), true));
        assert!(!from_own_site(&with("cross-site"), true));
        assert!(!from_own_site(&with("none"), false));
        assert!(from_own_site(&with("none"), true));
    }

    #[test]
    fn query_params_are_read_by_name() {
        let uri: Uri = "/api/events?x=1&key=abc".parse().expect("uri");
        assert_eq!(query_param(&uri, "key"), Some("abc"));
        assert_eq!(query_param(&uri, "k"), None);
    }
}
