//! The sources' prompts and resources, relayed to clients as the sources give them. A prompt
//! is named under its source (`everything.simple-prompt`), like a tool; a resource keeps its
//! URI, unless two sources list the same one: the second is then `capa://<source>/<uri>`. A
//! source a profile does not serve shows nothing; a policy rule that denies a prompt's address
//! hides it, and one that denies a whole source (`everything.*`) hides its resources too.
//! Each list asks the started sources at once, each within its call timeout; a source that
//! fails to answer is left out of that list (and logged), not the whole list. What comes back
//! has every known secret redacted, as tool results do.

use std::collections::BTreeSet;
use std::sync::Arc;

use capa_domain::{CatalogTool, Policy, ToolAddress, ToolDefinition};
use capa_upstream::{
    ClientAsker, CompleteRequestParams, CompleteResult, GetPromptResult, JsonObject, LogLevel,
    Prompt, ReadResourceResult, Reference, Resource, ResourceTemplate, Upstream, UpstreamError,
};
use futures::future::join_all;

use super::{Hub, Profile};

/// The prefix of a resource URI that two sources share, made unique.
const SOURCE_URI_PREFIX: &str = "capa://";

/// The source a resource a client named lives in.
pub(super) struct ResourceHome {
    pub(super) source: String,
    pub(super) upstream: Arc<Upstream>,
    /// The URI the source knows it by.
    pub(super) uri: String,
}

/// Why a prompt or resource could not be given.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RelayError {
    /// No served source offers a prompt of this name.
    #[error("no prompt `{0}`; prompts/list shows them")]
    UnknownPrompt(String),
    /// No served source lists this resource or a template it matches.
    #[error("no resource `{0}`; resources/list and resources/templates/list show them")]
    UnknownResource(String),
    /// The source of the resource does not tell when its resources change.
    #[error("source `{0}` does not tell when its resources change, so it offers no subscriptions")]
    NoSubscriptions(String),
    /// The source that offers it failed to answer.
    #[error(transparent)]
    Upstream(#[from] UpstreamError),
}

impl Hub {
    /// Every prompt of the sources `profile` serves, named `source.prompt` (or by its own name,
    /// see [`Hub::naming_in`]).
    pub async fn prompts_in(&self, profile: Option<&Profile>) -> Vec<Prompt> {
        let policy = self.policy_in(profile);
        let naming = self.naming_in(profile);
        let lists = self
            .lists(&policy, "prompts/list", |upstream| async move {
                upstream.list_prompts().await
            })
            .await;
        let mut prompts = Vec::new();
        for (id, listed) in lists {
            prompts.extend(
                listed
                    .into_iter()
                    .filter(|p| !denied(&policy, &id, &p.name))
                    .map(|mut p| {
                        p.name = naming.shown(&id, &p.name);
                        p
                    }),
            );
        }
        self.redacted(prompts)
    }

    /// The prompt `name` (`source.prompt`) with `arguments`, from its source; `asker`, the
    /// client asking, answers what the source asks for it meanwhile (redacted on the way).
    pub async fn get_prompt_in(
        &self,
        profile: Option<&Profile>,
        name: &str,
        arguments: Option<JsonObject>,
        asker: Option<Arc<dyn ClientAsker>>,
    ) -> Result<GetPromptResult, RelayError> {
        let unknown = || RelayError::UnknownPrompt(name.to_owned());
        let naming = self.naming_in(profile);
        let (source, remote) = naming.split(name).ok_or_else(unknown)?;
        let policy = self.policy_in(profile);
        if denied(&policy, source, remote) {
            return Err(unknown());
        }
        let upstream = self.relayed_one(&policy, source).ok_or_else(unknown)?;
        if !upstream.offers().prompts {
            return Err(unknown());
        }
        let asker = asker.map(|a| self.source_asker(a, source));
        let got = upstream.get_prompt(remote, arguments, asker).await;
        Ok(self.redacted(self.relay_result(got)?))
    }

    /// Every resource of the sources `profile` serves, URIs made unique across sources.
    pub async fn resources_in(&self, profile: Option<&Profile>) -> Vec<Resource> {
        let mut seen = BTreeSet::new();
        let mut resources = Vec::new();
        for (id, listed) in self.listed_resources(profile).await {
            for mut resource in listed {
                if !seen.insert(resource.uri.clone()) {
                    resource.uri = format!("{SOURCE_URI_PREFIX}{id}/{}", resource.uri);
                }
                resources.push(resource);
            }
        }
        self.redacted(resources)
    }

    /// Every resource template of the sources `profile` serves, as the sources give them.
    pub async fn resource_templates_in(&self, profile: Option<&Profile>) -> Vec<ResourceTemplate> {
        let policy = self.policy_in(profile);
        let lists = self
            .lists(&policy, "resources/templates/list", |upstream| async move {
                upstream.list_resource_templates().await
            })
            .await;
        let templates: Vec<ResourceTemplate> =
            lists.into_iter().flat_map(|(_, listed)| listed).collect();
        self.redacted(templates)
    }

    /// The resource at `uri`, read from the source that lists it, or (for a URI made from a
    /// template) the first source with a template it fits. A URI no source offers is never sent
    /// to any source. `asker`, the client asking, answers what the source asks for it meanwhile
    /// (redacted on the way), as for a prompt.
    pub async fn read_resource_in(
        &self,
        profile: Option<&Profile>,
        uri: &str,
        asker: Option<Arc<dyn ClientAsker>>,
    ) -> Result<ReadResourceResult, RelayError> {
        let home = self.resource_home(profile, uri).await?;
        let asker = asker.map(|a| self.source_asker(a, &home.source));
        let read = home.upstream.read_resource(&home.uri, asker).await;
        Ok(self.redacted(self.relay_result(read)?))
    }

    /// Where the resource a client names `uri` lives: `capa://<source>/<uri>` names its source;
    /// else the source that lists `uri`, else the first with a template it fits.
    pub(super) async fn resource_home(
        &self,
        profile: Option<&Profile>,
        uri: &str,
    ) -> Result<ResourceHome, RelayError> {
        let unknown = || RelayError::UnknownResource(uri.to_owned());
        let policy = self.policy_in(profile);
        if let Some(rest) = uri.strip_prefix(SOURCE_URI_PREFIX)
            && let Some((source, original)) = rest.split_once('/')
            && let Some(upstream) = self.relayed_one(&policy, source)
        {
            return Ok(ResourceHome {
                source: source.to_owned(),
                upstream,
                uri: original.to_owned(),
            });
        }
        for (id, listed) in self.listed_resources(profile).await {
            if listed.iter().any(|r| r.uri == uri) {
                let upstream = self.relayed_one(&policy, &id).ok_or_else(unknown)?;
                return Ok(ResourceHome {
                    source: id,
                    upstream,
                    uri: uri.to_owned(),
                });
            }
        }
        let (source, upstream) = self
            .template_source(&policy, |t| template_fits(&t.uri_template, uri))
            .await
            .ok_or_else(unknown)?;
        Ok(ResourceHome {
            source,
            upstream,
            uri: uri.to_owned(),
        })
    }

    /// Completions of an argument of a prompt (`ref/prompt`, named `source.prompt`) or of a
    /// resource template (`ref/resource`, the template as its source lists it), from the
    /// source that offers it.
    pub async fn complete_in(
        &self,
        profile: Option<&Profile>,
        mut params: CompleteRequestParams,
    ) -> Result<CompleteResult, RelayError> {
        let policy = self.policy_in(profile);
        let naming = self.naming_in(profile);
        let upstream = match &mut params.r#ref {
            Reference::Prompt(prompt) => {
                let name = prompt.name.clone();
                let unknown = || RelayError::UnknownPrompt(name.clone());
                let (source, remote) = naming.split(&name).ok_or_else(unknown)?;
                if denied(&policy, source, remote) {
                    return Err(unknown());
                }
                let upstream = self.relayed_one(&policy, source).ok_or_else(unknown)?;
                remote.clone_into(&mut prompt.name);
                upstream
            }
            Reference::Resource(template) => {
                let found = self
                    .template_source(&policy, |t| t.uri_template == template.uri)
                    .await;
                found
                    .ok_or_else(|| RelayError::UnknownResource(template.uri.clone()))?
                    .1
            }
            // A kind of reference newer than this hub: nothing to complete.
            _ => return Ok(CompleteResult::default()),
        };
        let completed = upstream.complete(params).await;
        Ok(self.redacted(self.relay_result(completed)?))
    }

    /// The resources each served source lists, in source order.
    async fn listed_resources(&self, profile: Option<&Profile>) -> Vec<(String, Vec<Resource>)> {
        let policy = self.policy_in(profile);
        self.lists(&policy, "resources/list", |upstream| async move {
            upstream.list_resources().await
        })
        .await
    }

    /// Asks every relayed source for one list at once (`what` names it for the logs): their
    /// lists in source order, a source that fails to answer logged and left out.
    async fn lists<T, F, Fut>(&self, policy: &Policy, what: &str, ask: F) -> Vec<(String, Vec<T>)>
    where
        F: Fn(Arc<Upstream>) -> Fut,
        Fut: Future<Output = Result<Vec<T>, UpstreamError>>,
    {
        let asked = self.relayed(policy).into_iter().map(|(id, upstream)| {
            let listed = ask(upstream);
            async move { (id, listed.await) }
        });
        join_all(asked)
            .await
            .into_iter()
            .filter_map(|(id, listed)| match listed {
                Ok(listed) => Some((id, listed)),
                Err(e) => {
                    self.log_relay_failure(&id, what, &e);
                    None
                }
            })
            .collect()
    }

    /// The first relayed source (in source order) that lists a resource template `matches`
    /// accepts. A source that fails to list them is passed over.
    async fn template_source(
        &self,
        policy: &Policy,
        matches: impl Fn(&ResourceTemplate) -> bool,
    ) -> Option<(String, Arc<Upstream>)> {
        for (id, upstream) in self.relayed(policy) {
            let Ok(templates) = upstream.list_resource_templates().await else {
                continue;
            };
            if templates.iter().any(&matches) {
                return Some((id, upstream));
            }
        }
        None
    }

    /// Whether clients of `profile` hear of `source`: served by the profile, and no rule denies
    /// its whole namespace.
    pub fn relays_source_in(&self, profile: Option<&Profile>, source: &str) -> bool {
        let policy = self.policy_in(profile);
        policy.serves_source(source) && !denied(&policy, source, "*")
    }

    /// The started default upstream of each source the policy's profile serves whose whole
    /// namespace no rule denies, in source order.
    pub(super) fn relayed(&self, policy: &Policy) -> Vec<(String, Arc<Upstream>)> {
        let served: Vec<String> = self
            .source_defs()
            .into_iter()
            .filter(|d| !d.off && policy.serves_source(&d.id) && !denied(policy, &d.id, "*"))
            .map(|d| d.id)
            .collect();
        let upstreams = self.lock_upstreams();
        served
            .into_iter()
            .filter_map(|id| {
                let upstream = upstreams.get(&(id.clone(), None))?.clone();
                Some((id, upstream))
            })
            .collect()
    }

    fn relayed_one(&self, policy: &Policy, source: &str) -> Option<Arc<Upstream>> {
        self.relayed(policy)
            .into_iter()
            .find(|(id, _)| id == source)
            .map(|(_, upstream)| upstream)
    }

    /// `value` with every known secret redacted (a source may put one anywhere).
    fn redacted<T: serde::Serialize + serde::de::DeserializeOwned>(&self, value: T) -> T {
        super::redacting_asker::redacted(&self.redactor, value)
    }

    /// A source's answer, its error's text redacted.
    pub(super) fn relay_result<T>(
        &self,
        answer: Result<T, UpstreamError>,
    ) -> Result<T, RelayError> {
        answer
            .map_err(|e| RelayError::Upstream(super::upstream_errors::redacted(&self.redactor, e)))
    }

    pub(super) fn log_relay_failure(&self, source: &str, what: &str, error: &UpstreamError) {
        tracing::warn!(source = %source, error = %error, "{what} failed");
        self.log_source(source, LogLevel::Warn, &format!("{what} failed: {error}"));
    }
}

/// Whether the policy (with its profile's own rules and the rules that wait for a person's
/// confirmation) denies `source.name`: a prompt's address, or `source.*` for the whole source.
/// Asked as for a tool that says nothing of itself, so only rules decide.
fn denied(policy: &Policy, source: &str, name: &str) -> bool {
    let address = ToolAddress::new(source, name);
    let probe = CatalogTool {
        definition: ToolDefinition::new(address.to_string(), JsonObject::new()),
        remote_name: name.to_owned(),
        address,
    };
    policy.hides(&probe)
}

/// Whether `uri` could have been made from the RFC 6570 `template`: its literal parts appear
/// in order, the first at the start and the last at the end.
fn template_fits(template: &str, uri: &str) -> bool {
    let mut literals = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        literals.push(&rest[..open]);
        match rest[open..].find('}') {
            Some(close) => rest = &rest[open + close + 1..],
            None => return false,
        }
    }
    literals.push(rest);
    let Some((first, others)) = literals.split_first() else {
        return false;
    };
    let Some(mut remaining) = uri.strip_prefix(first) else {
        return false;
    };
    let last = others.len().saturating_sub(1);
    for (i, literal) in others.iter().enumerate() {
        if i == last && !others.is_empty() {
            return remaining.ends_with(literal) && remaining.len() >= literal.len();
        }
        match remaining.find(literal) {
            Some(at) => remaining = &remaining[at + literal.len()..],
            None => return false,
        }
    }
    remaining.is_empty()
}

#[cfg(test)]
mod tests {
    use super::template_fits;

    #[test]
    fn uris_fit_the_templates_they_can_come_from() {
        assert!(template_fits(
            "demo://resource/dynamic/text/{id}",
            "demo://resource/dynamic/text/7"
        ));
        assert!(!template_fits(
            "demo://resource/dynamic/text/{id}",
            "demo://resource/dynamic/blob/7"
        ));
        assert!(template_fits("file:///{path}.md", "file:///notes/a.md"));
        assert!(!template_fits("file:///{path}.md", "file:///notes/a.txt"));
        assert!(template_fits("plain://x", "plain://x"));
        assert!(!template_fits("plain://x", "plain://xy"));
        assert!(!template_fits("broken://{x", "broken://{x"));
    }
}
