//! The MCP front: an rmcp server handler over a [`Surface`], for stdio and Streamable HTTP alike.
//!
//! It serves 2026-07-28 (`server/discover`, stateless requests) and the `initialize` era
//! (2025-11-25, 2025-06-18) on the same endpoint; rmcp does the negotiation. Mode `expose-all`:
//! every exposed tool is its own MCP tool named `namespace.tool`.

#![expect(
    deprecated,
    reason = "logging and resources/subscribe are deprecated by 2026-07-28 but clients of the 2025 era still use them"
)]

use std::sync::Arc;

use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams,
    CompleteResult, ErrorData, GetPromptRequestParams, GetPromptResponse, GetSkillRequestParams,
    GetSkillResult, GetTaskParams, GetTaskResult, Implementation, InitializeRequestParams,
    InitializeResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListSkillsResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ResultType,
    ServerCapabilities, ServerConfig, SetLevelRequestParams, SubscribeRequestParams,
    SubscriptionFilter, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer, SubscriptionContext};

use capa_core::Progress;

use crate::asking::{asking, check_input_responses};
use crate::listen::{Lists, StreamSubscriptions};
use crate::notices::SessionWants;
use crate::surface::Surface;
use crate::task_store::TaskStore;

/// How often a session's change notifier checks that the session still exists.
const SESSION_CHECK: std::time::Duration = std::time::Duration::from_secs(10);

/// One MCP front. Cheap to clone; HTTP creates one per session.
#[derive(Clone)]
pub struct McpFront {
    surface: Arc<dyn Surface>,
    /// Names the connection this front serves when the transport has no session of its own
    /// (stdio: one front per connection), so state handed to it is good on it alone.
    connection: Arc<str>,
    /// The session's log level and resource subscriptions.
    wants: Arc<SessionWants>,
    /// The paired client of a stdio connection (its key came in `CAPA_CLIENT_KEY`); over
    /// HTTP each request names its own (`crate::pairing`).
    pairing: Option<capa_core::PairedClient>,
}

impl std::fmt::Debug for McpFront {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpFront").finish_non_exhaustive()
    }
}

impl McpFront {
    /// The skills this front serves (those the Skills extension allows).
    async fn skills(&self, method: &'static str) -> Result<Vec<capa_core::SkillFile>, ErrorData> {
        contained(method, self.surface.skills())
            .await
            .map(crate::skills::servable)
    }

    pub fn new(surface: Arc<dyn Surface>) -> Self {
        let nonce = getrandom::u64().unwrap_or_default();
        Self {
            surface,
            connection: format!("stdio:{nonce:016x}").into(),
            wants: Arc::default(),
            pairing: None,
        }
    }

    /// This front serves one connection of a client a person paired (stdio: the key came
    /// with the process, not with each request).
    #[must_use]
    pub fn with_pairing(mut self, pairing: Option<capa_core::PairedClient>) -> Self {
        self.pairing = pairing;
        self
    }
}

/// `request` with a panic in it turned into an error answer for that request alone: the hub
/// serves every client from one process, and a bug met by one request must not cost the others
/// (nor leave this client waiting for an answer that never comes).
async fn contained<T>(
    method: &'static str,
    request: impl std::future::Future<Output = Result<T, ErrorData>>,
) -> Result<T, ErrorData> {
    use futures::FutureExt;
    match std::panic::AssertUnwindSafe(request).catch_unwind().await {
        Ok(answer) => answer,
        Err(panic) => {
            let what = crate::panics::panic_text(panic.as_ref());
            tracing::error!(method, panic = %what, "a request failed inside the hub (a bug); answered with an error, the hub serves on");
            Err(ErrorData::internal_error(crate::panics::PANIC_ANSWER, None))
        }
    }
}

/// `capabilities` with the Tasks extension (SEP-2663) declared beside the others.
fn with_tasks(mut capabilities: ServerCapabilities) -> ServerCapabilities {
    let tasks = ServerCapabilities::builder().enable_tasks().build();
    capabilities
        .extensions
        .get_or_insert_with(Default::default)
        .extend(tasks.extensions.unwrap_or_default());
    capabilities
}

/// The surface's tasks, to a request the rmcp layer let through (it answers `-32601` where the
/// extension is not declared, and `-32021` to a client that did not declare it).
fn tasks_of(surface: &dyn Surface) -> Result<&rmcp::task_manager::TaskManager, ErrorData> {
    surface.tasks().map(TaskStore::manager).ok_or_else(|| {
        ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            "this server gives no tasks",
            None,
        )
    })
}

/// The client as it introduced itself, "name version", made safe to show and store
/// (`capa_domain::client`): `initialize`'s `clientInfo`, or on 2026-07-28 the request's
/// `_meta["io.modelcontextprotocol/clientInfo"]` (rmcp reads the request's first).
fn client_name(context: &RequestContext<RoleServer>) -> Option<String> {
    context
        .client_info()
        .and_then(|info| capa_domain::client_label(&info.name, &info.version))
}

impl ServerHandler for McpFront {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            // The sources' prompts and resources (docs/relay.md); the Skills extension requires
            // the resources capability as well: its files are resources.
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_completions()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_resources_subscribe()
            .enable_logging()
            .enable_skills()
            .build();
        let capabilities = if self.surface.tasks().is_some() {
            with_tasks(capabilities)
        } else {
            capabilities
        };
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(
                "capabilities",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(self.surface.instructions())
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let result = self.negotiate_initialize(&request);
        // A session of the initialize era keeps its peer: tell it when the tool list changes,
        // and when the prompts and resources may have.
        let mut changes = self.surface.tool_changes();
        let mut relayed = self.surface.relay().changes();
        let mut notices = self.surface.relay().notices();
        let wants = self.wants.clone();
        let surface = self.surface.clone();
        let peer = context.peer.clone();
        tokio::spawn(async move {
            // The lists may never change (code mode's tools never do): look now and then
            // whether the session is gone, so that its task ends with it.
            let mut check = tokio::time::interval(SESSION_CHECK);
            loop {
                tokio::select! {
                    changed = changes.next() => {
                        if !changed || peer.notify_tool_list_changed().await.is_err() {
                            break;
                        }
                    }
                    changed = relayed.next() => {
                        if !changed
                            || peer.notify_prompt_list_changed().await.is_err()
                            || peer.notify_resource_list_changed().await.is_err()
                        {
                            break;
                        }
                    }
                    notice = notices.next() => {
                        let Some(notice) = notice else { break };
                        if wants.deliver(&peer, notice).await.is_err() {
                            break;
                        }
                    }
                    _ = check.tick() => {
                        if peer.is_transport_closed() {
                            break;
                        }
                    }
                }
            }
            // The session is gone: its subscriptions at the sources go with it.
            for key in wants.take_all() {
                surface.relay().unsubscribe(key).await;
            }
        });
        result
    }

    /// 2026-07-28 clients learn of list changes on a `subscriptions/listen` stream (there is no
    /// session to push them on); the hub offers the tools', prompts' and resources' there.
    /// And the resources it asks to hear of (each subscribed at its source when the stream
    /// opens; one no source offers is left out, and so never reported).
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let uris = requested.resource_subscriptions.clone().unwrap_or_default();
        let builder = SubscriptionFilter::builder()
            .tools_list_changed()
            .prompts_list_changed()
            .resources_list_changed();
        let builder = if uris.is_empty() {
            builder
        } else {
            builder.resource_subscriptions(uris)
        };
        Some(builder.build())
    }

    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), ErrorData> {
        let accepted = subscription.accepted();
        let tools = accepted.tools_list_changed == Some(true);
        let prompts = accepted.prompts_list_changed == Some(true);
        let resources = accepted.resources_list_changed == Some(true);
        let mut changes: Box<dyn crate::surface::ToolChanges> = if tools {
            self.surface.tool_changes()
        } else {
            Box::new(crate::boxed::Never)
        };
        let mut relayed: Box<dyn crate::surface::ToolChanges> = if prompts || resources {
            self.surface.relay().changes()
        } else {
            Box::new(crate::boxed::Never)
        };
        let relay = self.surface.relay();
        let uris = accepted.resource_subscriptions.clone().unwrap_or_default();
        let held = StreamSubscriptions::subscribe(relay, uris).await;
        let lists = Lists { prompts, resources };
        let mut notices = held.notices(relay, lists);
        let sink = subscription.sink();
        loop {
            tokio::select! {
                () = subscription.cancelled() => break,
                changed = changes.next() => {
                    if !changed || sink.notify_tool_list_changed().await.is_err() {
                        break;
                    }
                }
                changed = relayed.next() => {
                    if !changed
                        || (prompts && sink.notify_prompt_list_changed().await.is_err())
                        || (resources && sink.notify_resource_list_changed().await.is_err())
                    {
                        break;
                    }
                }
                notice = notices.next() => {
                    if !held.tell(sink, notice, lists).await {
                        break;
                    }
                }
            }
        }
        held.release(relay).await;
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let prompts = contained("prompts/list", self.surface.relay().list_prompts()).await?;
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        check_input_responses(request.input_responses.as_ref())?;
        let relay = self.surface.relay();
        let asking = asking(
            &context,
            (request.input_responses, request.request_state),
            (&self.connection, self.pairing.as_ref()),
        );
        let response = contained(
            "prompts/get",
            relay.get_prompt(request.name, request.arguments, asking),
        )
        .await?;
        Ok(match response {
            // A source of an older protocol version sends no `resultType`, which 2026-07-28
            // needs.
            GetPromptResponse::Complete(mut result) => {
                result.result_type = Some(ResultType::COMPLETE);
                GetPromptResponse::Complete(result)
            }
            other => other,
        })
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let mut result = contained(
            "completion/complete",
            self.surface.relay().complete(request),
        )
        .await?;
        result.result_type = Some(ResultType::COMPLETE);
        Ok(result)
    }

    /// The skills' files, then the sources' resources (a URI listed twice, once).
    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let skills = self.skills("resources/list").await?;
        let mut listed = crate::skills::list_resources(&skills)?;
        let relayed = contained("resources/list", self.surface.relay().list_resources()).await?;
        for resource in relayed {
            if !listed.resources.iter().any(|r| r.uri == resource.uri) {
                listed.resources.push(resource);
            }
        }
        Ok(listed)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let relay = self.surface.relay();
        let templates =
            contained("resources/templates/list", relay.list_resource_templates()).await?;
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    /// A skill's file, else the source's resource; an unknown URI is `-32602` with the URI.
    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let skills = self.skills("resources/read").await?;
        if skills.iter().any(|f| f.uri == request.uri) {
            return crate::skills::read_resource(&skills, &request.uri)
                .map(ReadResourceResponse::Complete);
        }
        check_input_responses(request.input_responses.as_ref())?;
        let relay = self.surface.relay();
        let asking = asking(
            &context,
            (request.input_responses, request.request_state),
            (&self.connection, self.pairing.as_ref()),
        );
        let response =
            contained("resources/read", relay.read_resource(request.uri, asking)).await?;
        Ok(match response {
            // A source of an older protocol version sends no `resultType`, which 2026-07-28
            // needs.
            ReadResourceResponse::Complete(mut result) => {
                result.result_type = Some(ResultType::COMPLETE);
                ReadResourceResponse::Complete(result)
            }
            other => other,
        })
    }

    /// The sources log from `level` up; this session is sent their messages from it up. A
    /// 2026-07-28 client has no session to be sent messages on (logging is deprecated there):
    /// its level changes nothing, rather than every other client's sources.
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let modern = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        if modern {
            return Ok(());
        }
        self.wants.set_level(request.level);
        contained(
            "logging/setLevel",
            self.surface.relay().set_log_level(request.level),
        )
        .await
    }

    /// The source of the resource is asked to tell of its changes (once for every client that
    /// subscribes); this session is sent `notifications/resources/updated` with its URI.
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // A session holds one subscription per URI: subscribing again changes nothing.
        if self.wants.holds(&request.uri) {
            return Ok(());
        }
        let relay = self.surface.relay();
        let key = contained("resources/subscribe", relay.subscribe(request.uri.clone())).await?;
        if let Some(replaced) = self.wants.subscribe(request.uri, key) {
            relay.unsubscribe(replaced).await;
        }
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if let Some(key) = self.wants.unsubscribe(&request.uri) {
            self.surface.relay().unsubscribe(key).await;
        }
        Ok(())
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let skills = self.skills("skills/list").await?;
        Ok(crate::skills::list_skills(&skills))
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let skills = self.skills("skills/get").await?;
        crate::skills::get_skill(&skills, &request.uri)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = contained("tools/list", self.surface.list_tools()).await?;
        Ok(ListToolsResult::with_all_items(tools))
    }

    /// rmcp checks a 2026-07-28 call's `Mcp-Param-*` headers against this tool's schema.
    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.surface.listed_tool(name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        check_input_responses(request.input_responses.as_ref())?;
        // Relay the upstream's progress under the client's own token, and finish relaying before
        // the result goes out (no progress may follow it).
        let (progress, relay) = match context.meta.get_progress_token() {
            Some(token) => {
                let (sink, mut reports) = tokio::sync::mpsc::unbounded_channel::<Progress>();
                let peer = context.peer.clone();
                let relay = tokio::spawn(async move {
                    while let Some(report) = reports.recv().await {
                        let mut params =
                            ProgressNotificationParam::new(token.clone(), report.progress);
                        params.total = report.total;
                        params.message = report.message;
                        if peer.notify_progress(params).await.is_err() {
                            break;
                        }
                    }
                });
                (Some(sink), Some(relay))
            }
            None => (None, None),
        };
        let round = (
            request.input_responses.clone(),
            request.request_state.clone(),
        );
        let mut asking = asking(&context, round, (&self.connection, self.pairing.as_ref()));
        if context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks())
        {
            asking.tasks = self.surface.tasks().cloned();
        }
        let response = contained(
            "tools/call",
            self.surface.call_tool_asking(
                request.name.into_owned(),
                request.arguments,
                client_name(&context),
                progress,
                asking,
            ),
        )
        .await;
        if let Some(relay) = relay {
            let _ = relay.await;
        }
        match response? {
            CallToolResponse::Complete(result) => {
                Ok(CallToolResponse::Complete(crate::relayed::relayed(result)))
            }
            other => Ok(other),
        }
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let tasks = tasks_of(self.surface.as_ref())?;
        match tasks.get_task(&request.task_id) {
            Ok(task) => Ok(GetTaskResult::new(task)),
            // Not in this process's memory: a task made before a restart, or followed by
            // another hub process on the same data, is answered as the store keeps it.
            Err(unknown) => self
                .surface
                .tasks()
                .and_then(TaskStore::keeper)
                .and_then(|keeper| keeper.kept(&request.task_id))
                .map(GetTaskResult::new)
                .ok_or(unknown),
        }
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let tasks = tasks_of(self.surface.as_ref())?;
        check_input_responses(Some(&request.input_responses))?;
        tasks.update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        tasks_of(self.surface.as_ref())?.cancel_task(&request.task_id)
    }
}
