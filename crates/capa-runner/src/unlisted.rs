//! Calls of sources that listed no tools when the run began (they waited for their first
//! connection; docs/approvals.md, "First use"): the code spelt the tool as it guessed, and the
//! tool's own name is known only once the source lists it.

use capa_sandbox::HostCall;
use capa_store::{ApprovalRecord, InputKind};

use crate::gateway::Gateway;
use crate::journal;

/// A call of a source that listed no tools when the attempt began is made under the code's
/// spelling (`notes.create_note`). When the source lists its tools by the time the call goes
/// out, it is the call of the tool whose member that spelling is (`notes.create-note`), as the
/// replay's real global will make it: one call, one address in the journal.
pub(crate) fn under_its_own_name<G: Gateway>(
    gateway: &G,
    unlisted: &[String],
    mut call: HostCall,
) -> HostCall {
    let Some((source, member)) = call.address.split_once('.') else {
        return call;
    };
    if !unlisted.iter().any(|s| s == source) {
        return call;
    }
    let catalog = gateway.catalog();
    if catalog.get(&call.address).is_some() {
        return call;
    }
    let tools: Vec<&capa_domain::CatalogTool> = catalog
        .tools()
        .iter()
        .filter(|t| t.address.namespace == source)
        .collect();
    let names: Vec<&str> = tools.iter().map(|t| t.address.name.as_str()).collect();
    let found = capa_typegen::member_names(&names)
        .iter()
        .position(|m| m == member)
        .map(|i| tools[i].address.to_string());
    if let Some(address) = found {
        call.address = address;
    }
    call
}

/// Whether `record`, an input that differs from `call` in its digest, is the connection input
/// this same call recorded before its source listed tools: the code's spelling of the tool then
/// (`notes.create_note`), the tool's own name now (`notes.create-note`), for one source, with the
/// same connection and arguments.
pub(crate) fn asked_before_tools_were_known(record: &ApprovalRecord, call: &HostCall) -> bool {
    let (Some((asked_source, asked_member)), Some((source, tool))) =
        (record.address.split_once('.'), call.address.split_once('.'))
    else {
        return false;
    };
    record.kind == InputKind::Connection
        && asked_source == source
        && capa_typegen::member_names(&[tool])
            .first()
            .is_some_and(|member| member == asked_member)
        && journal::call_digest(&record.address, call.connection.as_deref(), &call.arguments)
            == record.args_digest
}

#[cfg(test)]
mod tests {
    use super::*;
    use capa_store::ApprovalStatus;
    use serde_json::Value;

    fn input(address: &str, arguments: &Value) -> ApprovalRecord {
        ApprovalRecord {
            id: "apr_0".into(),
            run_id: "run_0".into(),
            call_index: 0,
            kind: InputKind::Connection,
            address: address.into(),
            source: "notes".into(),
            connection: None,
            preview: "{}".into(),
            reason: "Sign in to `notes` to continue".into(),
            args_digest: journal::call_digest(address, None, arguments),
            status: ApprovalStatus::Pending,
            scope: None,
            decided_via: None,
            created_at_ms: 0,
            expires_at_ms: 0,
            decided_at_ms: None,
            client: None,
        }
    }

    fn call(address: &str, arguments: Value) -> HostCall {
        HostCall {
            index: 0,
            address: address.into(),
            arguments,
            connection: None,
        }
    }

    #[test]
    fn a_call_made_before_its_tools_were_known_is_the_same_call_under_the_tools_own_name() {
        let args = serde_json::json!({ "title": "x" });
        let asked = input("notes.create_note", &args);
        assert!(asked_before_tools_were_known(
            &asked,
            &call("notes.create-note", args.clone())
        ));
        // Other arguments, another tool, another source, or an approval: not the same call.
        assert!(!asked_before_tools_were_known(
            &asked,
            &call("notes.create-note", serde_json::json!({ "title": "y" }))
        ));
        assert!(!asked_before_tools_were_known(
            &asked,
            &call("notes.delete-note", args.clone())
        ));
        assert!(!asked_before_tools_were_known(
            &asked,
            &call("other.create-note", args.clone())
        ));
        let approval = ApprovalRecord {
            kind: InputKind::Approval,
            ..asked
        };
        assert!(!asked_before_tools_were_known(
            &approval,
            &call("notes.create-note", args)
        ));
    }
}
