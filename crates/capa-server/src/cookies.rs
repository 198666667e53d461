//! The session cookies of the web UI and the approval page, and what else a session request must
//! bring. Browsers send a cookie to every port of a host, so a cookie alone would let any other
//! service on 127.0.0.1 that the browser visits act as the person (it could replay the cookie
//! from its own code, with any headers it likes). So a session is two halves: the cookie
//! (`HttpOnly`, `SameSite=Strict`, its name carrying the hub's port) and a key that stays on the
//! hub's own origin — in the UI's storage (sent as a header) or in the approval page's URL
//! (sent only to this origin under `Referrer-Policy: same-origin`). Every session request,
//! reads included, needs both; a cookie sent twice (another port planted one) is refused.

use axum::http::{HeaderMap, Uri, header};

/// A cookie's name for the hub on `port`: `capa_ui_4477`.
pub(crate) fn name(base: &str, port: u16) -> String {
    format!("{base}_{port}")
}

/// What the `Cookie` headers hold under one name.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Found<'a> {
    Missing,
    One(&'a str),
    /// More than once: which one the hub set cannot be told, so none is used.
    Duplicate,
}

/// The value of cookie `name` across every `Cookie` header.
pub(crate) fn find<'a>(headers: &'a HeaderMap, name: &str) -> Found<'a> {
    let mut values = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|h| h.to_str().ok())
        .flat_map(|h| h.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .filter(|(n, _)| *n == name)
        .map(|(_, value)| value);
    match (values.next(), values.next()) {
        (None, _) => Found::Missing,
        (Some(value), None) => Found::One(value),
        (Some(_), Some(_)) => Found::Duplicate,
    }
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
    fn a_cookie_is_found_once_or_refused_as_duplicate() {
        assert_eq!(
            find(&headers(&["a=1; capa_ui_4477=abc; b=2"]), "capa_ui_4477"),
            Found::One("abc")
        );
        assert_eq!(
            find(&headers(&["capa_ui_4478=abc"]), "capa_ui_4477"),
            Found::Missing
        );
        assert_eq!(
            find(
                &headers(&["capa_ui_4477=mine; capa_ui_4477=planted"]),
                "capa_ui_4477"
            ),
            Found::Duplicate
        );
        assert_eq!(
            find(
                &headers(&["capa_ui_4477=mine", "capa_ui_4477=planted"]),
                "capa_ui_4477"
            ),
            Found::Duplicate
        );
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
