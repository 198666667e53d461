//! A typed client of the hub, for one-shot commands: [`HubClient`] with two implementations,
//! [`LocalHub`] (a hub in this process) and [`RemoteHub`] (the running hub's JSON API over
//! HTTP), and [`OpenHub`], whichever of the two a command got.

mod local;
mod remote;
mod waiting;

use std::sync::Arc;

use capa_core::Hub;

pub use local::LocalHub;
pub use remote::RemoteHub;
pub use waiting::call_when_decided;

use crate::api::{
    CallAnswer, CallRequest, DescribeApiRequest, LookupAnswer, ProfileListing, SearchApiRequest,
    SkillListing, SourceView, ToolListing,
};
use crate::running::{ClientError, RunningHub};

/// What a one-shot command asks of a hub, wherever the hub runs.
#[expect(
    async_fn_in_trait,
    reason = "the callers are this workspace's shells, which await on the task they run on"
)]
pub trait HubClient {
    /// Every source's state, in configuration order.
    async fn sources(&self) -> Result<Vec<SourceView>, ClientError>;
    /// The catalog as a person lists it (denied tools included, marked).
    async fn tools(&self) -> Result<Vec<ToolListing>, ClientError>;
    /// Every skill, active or not.
    async fn skills(&self) -> Result<Vec<SkillListing>, ClientError>;
    /// The default profile, then each named one.
    async fn profiles(&self) -> Result<Vec<ProfileListing>, ClientError>;
    /// One call through the authorizer.
    async fn call(&self, request: CallRequest) -> Result<CallAnswer, ClientError>;
    /// Code mode's `search` lookup.
    async fn search(&self, request: SearchApiRequest) -> Result<LookupAnswer, ClientError>;
    /// Code mode's `describe` lookup.
    async fn describe(&self, request: DescribeApiRequest) -> Result<LookupAnswer, ClientError>;
}

/// The running hub when there is one, else a hub started in this process.
#[derive(Debug)]
pub enum OpenHub {
    Running(RemoteHub),
    Local(LocalHub),
}

impl OpenHub {
    pub fn remote(running: RunningHub) -> Self {
        Self::Running(RemoteHub::new(running))
    }

    pub fn local(hub: Arc<Hub>) -> Self {
        Self::Local(LocalHub::new(hub))
    }

    /// Stops a hub started in this process; a running hub goes on.
    pub async fn close(self) {
        if let Self::Local(local) = self {
            local.close().await;
        }
    }
}

impl HubClient for OpenHub {
    async fn sources(&self) -> Result<Vec<SourceView>, ClientError> {
        match self {
            Self::Running(r) => r.sources().await,
            Self::Local(l) => l.sources().await,
        }
    }

    async fn tools(&self) -> Result<Vec<ToolListing>, ClientError> {
        match self {
            Self::Running(r) => r.tools().await,
            Self::Local(l) => l.tools().await,
        }
    }

    async fn skills(&self) -> Result<Vec<SkillListing>, ClientError> {
        match self {
            Self::Running(r) => r.skills().await,
            Self::Local(l) => l.skills().await,
        }
    }

    async fn profiles(&self) -> Result<Vec<ProfileListing>, ClientError> {
        match self {
            Self::Running(r) => r.profiles().await,
            Self::Local(l) => l.profiles().await,
        }
    }

    async fn call(&self, request: CallRequest) -> Result<CallAnswer, ClientError> {
        match self {
            Self::Running(r) => r.call(request).await,
            Self::Local(l) => l.call(request).await,
        }
    }

    async fn search(&self, request: SearchApiRequest) -> Result<LookupAnswer, ClientError> {
        match self {
            Self::Running(r) => r.search(request).await,
            Self::Local(l) => l.search(request).await,
        }
    }

    async fn describe(&self, request: DescribeApiRequest) -> Result<LookupAnswer, ClientError> {
        match self {
            Self::Running(r) => r.describe(request).await,
            Self::Local(l) => l.describe(request).await,
        }
    }
}
