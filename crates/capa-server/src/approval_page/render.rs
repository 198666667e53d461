//! The page's HTML: self-contained (inline CSS, no scripts, no external resources), and every
//! value escaped: addresses, reasons and previews come from model-written calls.

use capa_core::{Choice, PendingInput};

/// Escapes text for HTML element content and quoted attribute values.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Percent-encodes one URL path segment.
pub(super) fn path_segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

const STYLE: &str = "
:root { color-scheme: light dark; --line: #8884; --muted: #777; --accent: #2563eb; --danger: #b91c1c; }
body { font: 16px/1.5 system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 0; padding: 2rem 1rem; }
main { max-width: 46rem; margin: 0 auto; }
h1 { font-size: 1.4rem; margin: 0 0 .25rem; }
h2 { font-size: 1.15rem; margin: 0 0 .75rem; }
.lead, .muted { color: var(--muted); }
.card { border: 1px solid var(--line); border-radius: 10px; padding: 1rem 1.25rem; margin: 1.25rem 0; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0 0 .75rem; }
dt { color: var(--muted); }
dd { margin: 0; overflow-wrap: anywhere; }
pre { background: #8881; border: 1px solid var(--line); border-radius: 6px; padding: .75rem; overflow: auto; max-height: 24rem; font-size: .875rem; white-space: pre-wrap; overflow-wrap: anywhere; }
.choices { display: flex; flex-wrap: wrap; gap: .5rem; }
.choices form { margin: 0; }
button { font: inherit; padding: .45rem .9rem; border-radius: 6px; border: 1px solid var(--line); background: transparent; color: inherit; cursor: pointer; }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button.deny { border-color: var(--danger); color: var(--danger); }
.flash { border-left: 4px solid var(--accent); padding: .5rem .75rem; background: #2563eb14; border-radius: 4px; }
code { font-size: .9em; }
";

/// A whole document around `body` (already HTML).
pub(super) fn document(title: &str, body: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{} · Capabilities</title><style>{STYLE}</style></head>\
         <body><main>{body}</main></body></html>\n",
        escape(title)
    )
}

/// The page a one-time link lands on: it sends the browser on to `location` (a path on this
/// origin) itself. A redirect would not do: when the link was opened from another site (the
/// private forwarding page the hub gives the browser is a `file://` one), a `SameSite=Strict`
/// cookie is not sent along a redirect, but it is with a navigation this origin's page starts.
pub(crate) fn landing_page(location: &str) -> String {
    let location = escape(location);
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"refresh\" content=\"0;url={location}\">\
         <title>Opening · Capabilities</title><style>{STYLE}</style></head>\
         <body><main><p><a href=\"{location}\">Continue</a></p></main></body></html>\n"
    )
}

/// A page with one message: link expired, refused request, and the like.
pub(crate) fn message_page(title: &str, paragraphs: &[&str]) -> String {
    let mut body = format!("<h1>{}</h1>", escape(title));
    for p in paragraphs {
        body.push_str(&format!("<p>{}</p>", inline_code(p)));
    }
    document(title, &body)
}

/// Escapes `text`, rendering `` `spans` `` as `<code>`.
fn inline_code(text: &str) -> String {
    escape(text)
        .split('`')
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                format!("<code>{part}</code>")
            } else {
                part.to_owned()
            }
        })
        .collect()
}

/// The page of one paused run.
pub(super) struct RunPage<'a> {
    pub run_id: &'a str,
    pub pending: &'a [PendingInput],
    pub csrf: &'a str,
    pub flash: Option<&'a str>,
}

impl RunPage<'_> {
    pub(super) fn render(&self) -> String {
        let mut body = String::new();
        body.push_str("<h1>Capabilities: approval</h1>");
        body.push_str(&format!(
            "<p class=\"lead\">Run <code>{}</code></p>",
            escape(self.run_id)
        ));
        if let Some(flash) = self.flash {
            body.push_str(&format!(
                "<p class=\"flash\" role=\"status\">{}</p>",
                escape(flash)
            ));
        }
        if self.pending.is_empty() {
            body.push_str("<p>Nothing is waiting. Return to your AI client; it will continue.</p>");
            return document("Nothing is waiting", &body);
        }
        body.push_str(
            "<p>An AI client's code paused on the calls below. Check what they would do, decide, \
             then return to your AI client; it continues when it resumes the run.</p>",
        );
        for input in self.pending {
            if input.kind == capa_store::InputKind::Approval {
                self.approval(&mut body, input);
            } else {
                connection(&mut body, input);
            }
        }
        document("Approve a call", &body)
    }

    fn approval(&self, body: &mut String, input: &PendingInput) {
        body.push_str("<section class=\"card\">");
        body.push_str(&format!("<h2><code>{}</code></h2>", escape(&input.address)));
        facts(body, input);
        body.push_str(&format!(
            "<dl><dt>Why you are asked</dt><dd>{}</dd></dl>",
            escape(&input.reason)
        ));
        let preview = serde_json::to_string_pretty(&input.preview).unwrap_or_else(|_| "{}".into());
        body.push_str(&format!(
            "<div class=\"muted\">Arguments</div><pre>{}</pre>",
            escape(&preview)
        ));
        body.push_str("<div class=\"choices\">");
        let action = format!("/approve/run/{}/decide", path_segment(self.run_id));
        for choice in Choice::ALL {
            let class = match choice {
                Choice::Once => "primary",
                Choice::Deny => "deny",
                Choice::Run | Choice::Always => "",
            };
            body.push_str(&format!(
                "<form method=\"post\" action=\"{action}\">\
                 <input type=\"hidden\" name=\"approval\" value=\"{}\">\
                 <input type=\"hidden\" name=\"choice\" value=\"{}\">\
                 <input type=\"hidden\" name=\"csrf\" value=\"{}\">\
                 <button type=\"submit\" class=\"{class}\">{}</button></form>",
                escape(&input.id),
                choice.as_str(),
                escape(self.csrf),
                escape(&choice.title(&input.address)),
            ));
        }
        body.push_str("</div></section>");
    }
}

/// The client that asks, source and connection of a pending input.
fn facts(body: &mut String, input: &PendingInput) {
    body.push_str("<dl>");
    if let Some(client) = &input.client {
        body.push_str(&format!("<dt>Client</dt><dd>{}</dd>", escape(client)));
    }
    body.push_str(&format!(
        "<dt>Source</dt><dd>{}</dd>",
        escape(&input.source)
    ));
    if let Some(connection) = &input.connection {
        body.push_str(&format!(
            "<dt>Connection</dt><dd>{}</dd>",
            escape(connection)
        ));
    }
    body.push_str("</dl>");
}

fn connection(body: &mut String, input: &PendingInput) {
    body.push_str("<section class=\"card\">");
    body.push_str(&format!(
        "<h2><code>{}</code> needs a connection</h2>",
        escape(&input.address)
    ));
    facts(body, input);
    body.push_str(&format!(
        "<p>Add a connection for <code>{source}</code> in Capabilities, or with \
         <code>capa connections set {source}</code> in a terminal, then return to your AI client. \
         Never paste secrets into the chat.</p>",
        source = escape(&input.source)
    ));
    body.push_str("</section>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pending(kind: capa_store::InputKind, preview: serde_json::Value) -> PendingInput {
        PendingInput {
            id: "ap_1".into(),
            run_id: "run_1".into(),
            call_index: 0,
            args_digest: String::new(),
            kind,
            address: "demo.delete_note".into(),
            source: "demo".into(),
            connection: None,
            preview,
            reason: "destructive tool".into(),
            created_at_ms: 0,
            expires_at_ms: 0,
            client: None,
        }
    }

    #[test]
    fn previews_are_escaped() {
        let inputs = [pending(
            capa_store::InputKind::Approval,
            json!({"title": "</pre><script>alert(1)</script>&"}),
        )];
        let html = RunPage {
            run_id: "run_1",
            pending: &inputs,
            csrf: "c0ffee",
            flash: Some("<b>"),
        }
        .render();
        assert!(!html.contains("<script>"));
        assert!(html.contains("&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp;"));
        assert!(html.contains("&lt;b&gt;"));
        assert_eq!(html.matches("name=\"csrf\" value=\"c0ffee\"").count(), 4);
        assert!(html.contains("Always allow demo.delete_note"));
        assert!(html.contains("action=\"/approve/run/run_1/decide\""));
    }

    #[test]
    fn connections_have_no_buttons_and_an_empty_run_says_so() {
        let inputs = [pending(capa_store::InputKind::Connection, json!({}))];
        let html = RunPage {
            run_id: "run_1",
            pending: &inputs,
            csrf: "c",
            flash: None,
        }
        .render();
        assert!(!html.contains("<button"));
        assert!(html.contains("capa connections set demo"));
        let empty = RunPage {
            run_id: "run_1",
            pending: &[],
            csrf: "c",
            flash: None,
        }
        .render();
        assert!(empty.contains("Nothing is waiting. Return to your AI client; it will continue."));
    }

    #[test]
    fn path_segments_are_percent_encoded() {
        assert_eq!(path_segment("run_1-a.b"), "run_1-a.b");
        assert_eq!(path_segment("a/b c"), "a%2Fb%20c");
    }
}
