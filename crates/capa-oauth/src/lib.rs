//! OAuth connections of HTTP sources.
//!
//! The protocol is rmcp's `auth` feature (the MCP authorization spec as a client: protected
//! resource metadata, authorization server metadata, dynamic registration, PKCE S256, the
//! `resource` parameter, refresh). This crate adds what a desktop hub needs around it:
//!
//! - [`TokenStore`]: a source connection's token set in the OS keychain (split in parts that fit
//!   Windows Credential Manager), cached in memory, every secret handed to the redactor;
//! - [`sign_in`]: the sign-in of a person, with the browser sent to the authorization server and
//!   the redirect received on a loopback port (RFC 8252);
//! - [`authorized_client`]: the HTTP client of an upstream that sends, refreshes and saves the
//!   tokens as it goes.
//!
//! Nothing here logs a token, a code or a client secret.

mod connect;
mod sign_in;
mod store;
mod token_set;

pub use connect::{ConnectError, authorized_client};
pub use sign_in::{
    PastedRedirectError, PendingSignIn, RedirectInbox, SignInError, SignInRequest, begin as sign_in,
};
pub use store::{OnSecret, TokenStore};
pub use token_set::{TokenSummary, secrets_in};

/// The field name under which a connection keeps its OAuth token set.
pub const OAUTH_FIELD: &str = "oauth";

/// The rmcp client type an upstream uses: its HTTP client wrapped with the token handling.
pub type AuthClient<C> = rmcp::transport::auth::AuthClient<C>;
