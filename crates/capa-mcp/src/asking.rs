//! What the client of one call can do to let a person decide (form or URL elicitation, on a
//! session or in `input_required` rounds), and what it sent back from an earlier round.

use rmcp::model::{InputResponses, ProtocolVersion};
use rmcp::service::{Peer, RequestContext, RoleServer};

/// What the client of one call can do to let a person decide, and what it sent back from an
/// earlier round.
#[derive(Debug, Clone, Default)]
pub struct Asking {
    /// It speaks 2026-07-28, declared form elicitation and is paired with its forms on:
    /// approvals go to it in `input_required` rounds.
    pub input_required: bool,
    /// An initialize-era session that declared form elicitation and is paired with its forms
    /// on: the server sends it `elicitation/create` for approvals mid-call.
    pub elicit_peer: Option<Peer<RoleServer>>,
    /// The client a person paired, when it presented its key (`crate::pairing`); `None` for
    /// the shared hub token. Only a paired client with its forms on answers approvals.
    pub paired: Option<capa_core::PairedClient>,
    /// It declared URL elicitation: a sign-in the run waits for is offered as a link to the
    /// hub's sign-in page, in `input_required` (2026-07-28) or as `elicitation/create` on
    /// `url_peer` (earlier versions).
    pub url_input_required: bool,
    pub url_peer: Option<Peer<RoleServer>>,
    /// Answers to an earlier `input_required`, and the state it carried.
    pub input_responses: Option<InputResponses>,
    pub request_state: Option<String>,
    /// Whose session this call belongs to, for state kept across calls (search mode's
    /// callable matches, on-demand's active skills): the HTTP session, else (2026-07-28
    /// stateless requests) the client's name and version, else (stdio) the one connection.
    pub session: String,
    /// Fires when the client cancels the request (`notifications/cancelled`) or goes away: a
    /// run it started ends `cancelled`.
    pub cancel: tokio_util::sync::CancellationToken,
    /// The client as it introduced itself, as sent (untrusted; `capa_domain::client_label`
    /// makes it safe to show): `capa mcp`'s bridge passes it on to the running hub.
    pub client_info: Option<rmcp::model::Implementation>,
    /// An initialize-era session, to which the tool's source's own requests (sampling,
    /// elicitation) are passed on during the call (`crate::asker`).
    pub client_peer: Option<Peer<RoleServer>>,
    /// What the client declared it can do.
    pub client_capabilities: Option<rmcp::model::ClientCapabilities>,
    /// It speaks 2026-07-28: a source's requests during its direct call travel in
    /// `input_required` rounds (`crate::folded`).
    pub round_trips: bool,
    /// This request declared the Tasks extension (SEP-2663) and the surface gives tasks: a
    /// source's task of the call is handed to the client as a task of the hub's here
    /// (`crate::tasks`).
    pub tasks: Option<crate::task_store::TaskStore>,
}

/// `-32602` unless every answer in `inputResponses` is an object, as every result a client can be
/// asked for is (an elicitation's, a sampling's, a roots list): what is not one answers nothing,
/// and is refused before anything runs rather than handed to a source or an approval.
pub(crate) fn check_input_responses(
    responses: Option<&InputResponses>,
) -> Result<(), rmcp::model::ErrorData> {
    let Some(responses) = responses else {
        return Ok(());
    };
    match responses.iter().find(|(_, answer)| !answer.is_object()) {
        Some((key, _)) => Err(rmcp::model::ErrorData::invalid_params(
            format!(
                "inputResponses.{key} is not a result object; answer each request with the result it asks for"
            ),
            Some(serde_json::json!({ "inputResponse": key })),
        )),
        None => Ok(()),
    }
}

/// How this call's client can let a person decide. rmcp refuses `input_required` to clients
/// older than 2026-07-28 and server-initiated requests to 2026-07-28 ones, hence the split.
/// Approvals go to the client's own form only when a person paired it and left its forms on
/// (`crate::pairing`): the shared token is held by every local process, so a form answered
/// over it is nobody's decision.
pub(crate) fn asking(
    context: &RequestContext<RoleServer>,
    (input_responses, request_state): (Option<rmcp::model::InputResponses>, Option<String>),
    (connection, stdio_pairing): (&str, Option<&capa_core::PairedClient>),
) -> Asking {
    let declared_forms = context
        .client_capabilities()
        .is_some_and(|c| capa_core::Wanted::Elicitation.declared_by(&c));
    let paired = crate::pairing::paired_client(context, stdio_pairing);
    let form = declared_forms && paired.as_ref().is_some_and(|p| p.forms);
    let modern = context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
    let url = context
        .client_capabilities()
        .and_then(|c| c.elicitation)
        .is_some_and(|e| e.url.is_some());
    Asking {
        input_required: form && modern,
        elicit_peer: (form && !modern).then(|| context.peer.clone()),
        url_input_required: url && modern,
        url_peer: (url && !modern).then(|| context.peer.clone()),
        input_responses,
        request_state,
        session: session_key(context, connection),
        cancel: context.ct.clone(),
        client_info: context.client_info(),
        client_peer: (!modern).then(|| context.peer.clone()),
        round_trips: modern,
        client_capabilities: context.client_capabilities(),
        tasks: None,
        paired,
    }
}

/// The HTTP session of a request (rmcp answers 404 to an id it did not issue), else its client
/// (2026-07-28 requests over HTTP are stateless: the spec gives them no session, so the client's
/// own name and version is all there is), else the stdio connection this front serves.
fn session_key(context: &RequestContext<RoleServer>, connection: &str) -> String {
    let Some(parts) = context.extensions.get::<http::request::Parts>() else {
        return connection.to_owned();
    };
    if let Some(id) = parts
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
    {
        return format!("session:{id}");
    }
    let client = context
        .client_info()
        .map(|i| format!("{}/{}", i.name, i.version))
        .unwrap_or_default();
    format!("client:{client}")
}
