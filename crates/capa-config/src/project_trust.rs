//! What a project file found from the working directory up brings besides sources of its own:
//! skills, profiles, options, and sources with the id of one of the person's global sources.
//! Such a file may come from a cloned repository, so all of that is held — the person's own
//! skills, profiles, options and sources stay as they are — until the person trusts the file
//! as it is now, in one question that shows every item (`capa config trust`, or the question a
//! command asks at a terminal). What the person trusted is the [`ProjectSettings::digest`] of
//! the items, kept per file by the caller (the hub's store); a change of any item asks again.
//!
//! The project's own sources with new ids are not held here: each is trusted apart by how it
//! starts (capa-core's source confirmation), as before.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use sha2::{Digest, Sha256};

use crate::file::ExposureMode;
use crate::resolved::{ProjectItem, ProjectSettings, SourceConfig};
use crate::validate::CheckedFile;

/// The settings of found project file `project`, against the global file `global`; `trusted`
/// is the digest the person trusted for the file, when any.
pub(crate) fn settings_of(
    project: &CheckedFile,
    global: Option<&CheckedFile>,
    trusted: Option<&str>,
) -> ProjectSettings {
    let declared_globally = |id: &str| global.is_some_and(|g| g.declared.contains(id));
    // A turned-off server with a global id replaces nothing (the merge leaves the person's own
    // in place): only the project's active ones count.
    let replacing: Vec<SourceConfig> = project
        .sources
        .iter()
        .filter(|s| declared_globally(&s.id))
        .cloned()
        .collect();
    let global_skills: BTreeSet<&str> = global
        .map(|g| g.skills.iter().map(|s| s.id.as_str()).collect())
        .unwrap_or_default();
    let global_profiles: BTreeSet<&str> = global
        .map(|g| g.profiles.iter().map(|p| p.name.as_str()).collect())
        .unwrap_or_default();

    let mut items: Vec<ProjectItem> = replacing
        .iter()
        .map(|s| ProjectItem::ReplacesSource { id: s.id.clone() })
        .collect();
    items.extend(project.skills.iter().map(|s| ProjectItem::Skill {
        id: s.id.clone(),
        description: s.description.clone(),
        requires: s.requires.clone(),
        replaces_global: global_skills.contains(s.id.as_str()),
    }));
    items.extend(project.profiles.iter().map(|p| ProjectItem::Profile {
        name: p.name.clone(),
        mode: p.mode,
        sources: p.sources.as_ref().map(|s| s.iter().cloned().collect()),
        deny: p.deny.clone(),
        replaces_global: global_profiles.contains(p.name.as_str()),
    }));
    items.push(ProjectItem::Exposure {
        mode: project.exposure.unwrap_or(ExposureMode::ExposeAll),
        implied: project.exposure.is_none(),
    });
    items.extend(options_of(project));

    let digest = digest_of(project, &replacing, &items);
    ProjectSettings {
        file: project.file.clone(),
        trusted: trusted == Some(digest.as_str()),
        digest,
        items,
        replacing,
    }
}

fn options_of(project: &CheckedFile) -> Vec<ProjectItem> {
    let mut options = Vec::new();
    if let Some(timeout) = project.upstream_timeout {
        options.push(ProjectItem::Option {
            name: "upstreamTimeoutMs",
            value: timeout.as_millis().to_string(),
        });
    }
    if let Some(ttl) = project.approval_ttl {
        options.push(ProjectItem::Option {
            name: "approvalTtlMs",
            value: ttl.as_millis().to_string(),
        });
    }
    if let Some(demo) = project.demo {
        options.push(ProjectItem::Option {
            name: "demo",
            value: demo.to_string(),
        });
    }
    if let Some(semantic) = project.semantic_search {
        options.push(ProjectItem::Option {
            name: "search.semantic",
            value: semantic.to_string(),
        });
    }
    options
}

/// The digest of everything the settings cover, in full (each replacing source as configured,
/// its `expose` list included; skill documents; profile rules and limits; which of them replace
/// the person's own), not only what the items show: any change asks again. Written from this
/// crate's own types, so a new version of the hub that renders them another way asks once
/// more, never less.
fn digest_of(project: &CheckedFile, replacing: &[SourceConfig], items: &[ProjectItem]) -> String {
    let mut text = String::from("capabilities project settings v2\n");
    for item in items {
        let _ = writeln!(text, "item {item}");
    }
    for source in replacing {
        let _ = writeln!(text, "replaces {source:?}");
    }
    for skill in &project.skills {
        let _ = writeln!(text, "skill {skill:?}");
    }
    for profile in &project.profiles {
        let _ = writeln!(text, "profile {profile:?}");
    }
    let _ = writeln!(
        text,
        "options {:?} {:?} {:?} {:?} {:?}",
        project.exposure,
        project.upstream_timeout,
        project.approval_ttl,
        project.demo,
        project.semantic_search
    );
    Sha256::digest(text.as_bytes())
        .iter()
        .fold(String::with_capacity(64), |mut hex, byte| {
            let _ = write!(hex, "{byte:02x}");
            hex
        })
}
