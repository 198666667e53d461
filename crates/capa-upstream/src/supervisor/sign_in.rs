//! An upstream whose server wants a (new) sign-in: how a call's failure reads then, the scope a
//! step-up asked for kept for the next sign-in, and the wait (no reconnect loop) until the hub
//! starts the source anew.

use super::{Upstream, UpstreamState};
use crate::auth_signal::AuthSignal;
use crate::connect::{has_auth_header, sign_in_would_help};
use crate::error::UpstreamError;
use crate::source_log::{LogLevel, SourceLog};
use crate::spec::UpstreamTransport;

/// Why a connected upstream's calls wait for a person after its server refused the sign-in.
pub(super) const SIGNED_OUT: &str = "the server no longer accepts the sign-in (it was revoked or expired); sign in again from Capabilities (Sources, Sign in) or with `capa connections login`";

impl Upstream {
    /// A call that fails because the server stopped accepting the sign-in (a refused
    /// refresh) or wants more scope (a step-up) waits for a person, as a call made after it
    /// would. The scope asked for is kept with the sign-in, so the next one asks for it too.
    pub(super) async fn signed_out(
        &self,
        auth: Option<&AuthSignal>,
        error: UpstreamError,
    ) -> UpstreamError {
        let Some(auth) = auth.filter(|_| error.retryable() && !has_auth_header(&self.spec)) else {
            return error;
        };
        let signs_in = matches!(
            &self.spec.transport,
            UpstreamTransport::Http { oauth: Some(_), .. }
        );
        let reason = if let Some(scope) = auth.wanted_scope().filter(|_| signs_in) {
            self.want_scope(&scope).await;
            format!(
                "the server asks for more access (scope `{scope}`) than the sign-in gave; sign in again to grant it"
            )
        } else if sign_in_would_help(&self.spec, auth) {
            SIGNED_OUT.to_owned()
        } else {
            return error;
        };
        UpstreamError::NeedsSignIn {
            source_id: self.spec.source_id.clone(),
            reason,
        }
    }

    /// Keeps `scope` with the connection's sign-in for the next one to ask for, before the
    /// call answers: the person may sign in from another process (`capa connections login`)
    /// right after, and `capa call` may end with its answer.
    async fn want_scope(&self, scope: &str) {
        if let UpstreamTransport::Http {
            oauth: Some(store), ..
        } = &self.spec.transport
        {
            let scopes: Vec<String> = scope.split_whitespace().map(str::to_owned).collect();
            if let Err(e) = store.want_scopes(scopes).await {
                tracing::warn!(error = %e, "could not keep the scope a server asked for");
            }
        }
    }
}

/// The handshake passed but the server then refused the credentials (a sign-in it no longer
/// accepts, or none for a server that lets only the handshake through): a person signs in. A
/// source with its own `Authorization` header has a token a sign-in would not replace.
pub(super) fn refused_after_handshake(upstream: &Upstream) -> bool {
    upstream
        .snapshot
        .borrow()
        .auth
        .as_ref()
        .is_some_and(|a| sign_in_would_help(&upstream.spec, a))
}

/// Marks the upstream as needing a sign-in and waits for the hub to stop it: retrying cannot
/// help, and the hub starts the source anew once someone signed in.
pub(super) async fn wait_for_sign_in(
    upstream: &Upstream,
    log: &SourceLog,
    reason: String,
    changed: &impl Fn(),
) {
    log.hub(LogLevel::Warn, &format!("not connected: {reason}"));
    upstream.update(|s| {
        s.state = UpstreamState::NeedsSignIn;
        s.peer = None;
        s.last_error = Some(reason);
    });
    changed();
    upstream.shutdown.cancelled().await;
}
