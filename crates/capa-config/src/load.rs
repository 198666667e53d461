//! Reading capabilities files: where they are, parsing with positions, merging global and project.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::ConfigError;
use crate::file::{CapabilitiesFile, ExposureMode};
use crate::project_trust::settings_of;
use crate::resolved::{
    ExposureChoice, HubConfig, MAX_APPROVAL_TTL_MS, MAX_UPSTREAM_TIMEOUT_MS, ProjectSettings,
    SourceConfig, SourceScope,
};
use crate::validate::{self, CheckedFile, Inherited};
use crate::yaml;

/// Where the format is explained; fixes that need it point there.
pub(crate) const CONFIG_DOCS: &str = "docs/configuration.md";

/// File names a project file may have, in order of preference.
pub const PROJECT_FILE_NAMES: &[&str] = &["capabilities.yaml", "capabilities.yml"];

/// Which files make up the configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfigFiles {
    /// The user's global file (in the platform's config dir), when it exists.
    pub global: Option<PathBuf>,
    /// The project file found from the working directory up (or named with `--config`), when
    /// there is one.
    pub project: Option<PathBuf>,
    /// How `project` was chosen: whether its sources need the person's trust.
    pub project_origin: ProjectOrigin,
}

/// How the project file was chosen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ProjectOrigin {
    /// Found from the working directory (or `--project DIR`) up. It may come from a cloned
    /// repository, so its sources are [`SourceScope::Project`]: they run once the person
    /// trusted them.
    #[default]
    Found,
    /// Named with `--config FILE`: the person's own choice, treated like the global file
    /// ([`SourceScope::User`]).
    Named,
}

impl ConfigFiles {
    /// The project file when it was found from the working directory up (not named with
    /// `--config`): the one whose settings wait for the person's trust.
    pub fn found_project(&self) -> Option<&Path> {
        self.project
            .as_deref()
            .filter(|_| self.project_origin == ProjectOrigin::Found)
    }

    /// Only `file` (`--config FILE`): no global file, no project lookup.
    pub fn only(file: PathBuf) -> Self {
        Self {
            global: None,
            project: Some(file),
            project_origin: ProjectOrigin::Named,
        }
    }

    /// The global file in `config_dir` if it exists, and the nearest project file from `cwd` up.
    pub fn discover(config_dir: &Path, cwd: &Path) -> Self {
        let global = config_dir.join("capabilities.yaml");
        let global = global.is_file().then_some(global);
        let project = find_project_file(cwd).filter(|p| Some(p) != global.as_ref());
        Self {
            global,
            project,
            project_origin: ProjectOrigin::Found,
        }
    }
}

/// Why the files a command line names cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    #[error("{} does not exist; pass an existing capabilities file to --config", .0.display())]
    NoFile(PathBuf),
    #[error("{} is not a directory; pass the project's directory to --project", .0.display())]
    NoProjectDir(PathBuf),
    #[error("resolving {}: {source}", .path.display())]
    Resolve {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl ConfigFiles {
    /// The files a command line selects, the same for `capa` and the desktop app: `--config FILE`
    /// alone, else the global file in `config_dir` plus the project file found from `--project
    /// DIR` (else the working directory) up.
    pub fn select(
        config: Option<&Path>,
        project: Option<&Path>,
        config_dir: &Path,
    ) -> Result<Self, SelectError> {
        let absolute = |path: &Path| {
            std::path::absolute(path).map_err(|source| SelectError::Resolve {
                path: path.to_path_buf(),
                source,
            })
        };
        if let Some(file) = config {
            let file = absolute(file)?;
            if !file.is_file() {
                return Err(SelectError::NoFile(file));
            }
            return Ok(Self::only(file));
        }
        let start = match project {
            Some(dir) => {
                let dir = absolute(dir)?;
                if !dir.is_dir() {
                    return Err(SelectError::NoProjectDir(dir));
                }
                dir
            }
            None => std::env::current_dir().map_err(|source| SelectError::Resolve {
                path: PathBuf::from("."),
                source,
            })?,
        };
        Ok(Self::discover(config_dir, &start))
    }
}

/// The nearest `capabilities.yaml` (or `.yml`) in `start` or one of its parents.
pub fn find_project_file(start: &Path) -> Option<PathBuf> {
    start.ancestors().find_map(|dir| {
        PROJECT_FILE_NAMES
            .iter()
            .map(|name| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// Parses and checks one file on its own: its skills may name only its own servers (and `demo`).
pub fn load_file(file: &Path) -> Result<CheckedFile, ConfigError> {
    load_file_in(file, None)
}

fn load_file_in(file: &Path, inherited: Option<Inherited<'_>>) -> Result<CheckedFile, ConfigError> {
    let text = yaml::read_text(file).map_err(|source| ConfigError::Read {
        file: file.to_path_buf(),
        source,
    })?;
    let mut checked = parse_str_in(file, &text, inherited)?;
    crate::skill_md::add_skill_files(&mut checked, inherited).map_err(ConfigError::Invalid)?;
    Ok(checked)
}

/// Parses and checks the text of a file named `file`, on its own (see [`load_file`]).
pub fn parse_str(file: &Path, text: &str) -> Result<CheckedFile, ConfigError> {
    parse_str_in(file, text, None)
}

fn parse_str_in(
    file: &Path,
    text: &str,
    inherited: Option<Inherited<'_>>,
) -> Result<CheckedFile, ConfigError> {
    let read = yaml::read::<CapabilitiesFile>(file, text, CONFIG_DOCS);
    let checked = match read.value {
        Some(parsed) => validate::check(file, parsed, inherited),
        None => Err(Vec::new()),
    };
    match checked {
        Ok(checked) if read.issues.is_empty() => Ok(checked),
        Ok(_) => Err(ConfigError::Invalid(yaml::settle(read.issues, Vec::new()))),
        Err(issues) => Err(ConfigError::Invalid(yaml::settle(read.issues, issues))),
    }
}

/// Loads, checks and merges the files. A project file's skills may name servers the global file
/// declares. Sources of a project file that was found (not named with `--config`) are
/// [`SourceScope::Project`], and what it brings besides sources of its own — skills, profiles,
/// options, sources with a global source's id — applies only when the person trusted it as it
/// is: `trusted_settings` is the [`ProjectSettings::digest`] they trusted for that file (see
/// [`crate::project_trust`]). Until then the person's own skills, profiles, options and sources
/// stay in force, and the held items are named in [`HubConfig::project`] and its warnings. A
/// trusted project's sources and skills replace global ones with the same id, and its options
/// win over global ones. A file named with `--config` is the person's own: all of it applies.
pub fn load(files: &ConfigFiles, trusted_settings: Option<&str>) -> Result<HubConfig, ConfigError> {
    let global = files.global.as_deref().map(load_file).transpose()?;
    let inherited = global.as_ref().map(|g| Inherited {
        file: &g.file,
        servers: &g.declared,
    });
    let project = files
        .project
        .as_deref()
        .map(|file| load_file_in(file, inherited))
        .transpose()?;
    let Some(mut project) = project else {
        return Ok(merge(global.as_ref(), None));
    };
    if files.project_origin == ProjectOrigin::Named {
        return Ok(merge(global.as_ref(), Some(&project)));
    }
    for source in project.sources.iter_mut().chain(project.off.iter_mut()) {
        source.scope = SourceScope::Project {
            replaces_global: global
                .as_ref()
                .is_some_and(|g| g.declared.contains(&source.id)),
        };
    }
    let settings = settings_of(&project, global.as_ref(), trusted_settings);
    let mut config = if settings.trusted {
        merge(global.as_ref(), Some(&project))
    } else {
        let held = held_back(&project, &settings);
        let mut config = merge(global.as_ref(), Some(&held));
        config.exposure = exposure_choice(global.as_ref(), None);
        config.warnings.extend(held_warnings(&settings));
        config
    };
    config.project = Some(settings);
    Ok(config)
}

/// What of an untrusted project file applies: its sources with new ids, nothing else. Built
/// from what may pass rather than by clearing what may not, so that an option added to
/// [`CheckedFile`] later is held until trust without a line here.
fn held_back(project: &CheckedFile, settings: &ProjectSettings) -> CheckedFile {
    let new_id = |s: &&SourceConfig| !settings.replacing.iter().any(|r| r.id == s.id);
    CheckedFile {
        file: project.file.clone(),
        sources: project.sources.iter().filter(new_id).cloned().collect(),
        off: project.off.iter().filter(new_id).cloned().collect(),
        declared: project.declared.clone(),
        warnings: project.warnings.clone(),
        ..CheckedFile::default()
    }
}

fn held_warnings(settings: &ProjectSettings) -> Vec<String> {
    let file = settings.file.display();
    let dir = settings
        .file
        .parent()
        .map_or_else(|| ".".to_owned(), |d| d.display().to_string());
    let mut warnings: Vec<String> = settings
        .replacing
        .iter()
        .map(|s| {
            format!(
                "{file}: server `{id}` has the id of your global source `{id}`; yours is served until you trust this project file",
                id = s.id
            )
        })
        .collect();
    warnings.push(format!(
        "{file}: what it brings besides servers of its own ({} item{}: its skills, profiles and options, servers replacing yours) is held until you trust this project file: run `capa config trust` in a terminal in {dir}",
        settings.items.len(),
        if settings.items.len() == 1 { "" } else { "s" }
    ));
    warnings
}

/// Merges the person's global file and a project file whose settings apply.
fn merge(global: Option<&CheckedFile>, project: Option<&CheckedFile>) -> HubConfig {
    let mut config = HubConfig::default();
    let mut timeout: Option<Duration> = None;
    let mut approval_ttl: Option<Duration> = None;
    for file in global.into_iter().chain(project) {
        config.files.push(file.file.clone());
        config.warnings.extend(file.warnings.iter().cloned());
        for source in &file.sources {
            config.sources.retain(|s| s.id != source.id);
            config.sources.push(source.clone());
        }
        for source in &file.off {
            config.off_sources.retain(|s| s.id != source.id);
            config.off_sources.push(source.clone());
        }
        for skill in &file.skills {
            config.skills.retain(|s| s.id != skill.id);
            config.skills.push(skill.clone());
        }
        for profile in &file.profiles {
            if let Some(replaced) = config
                .profiles
                .insert(profile.name.clone(), profile.clone())
            {
                config.warnings.push(format!(
                    "{}: profile `{}` replaces the one of {} for clients in this project",
                    profile.file.display(),
                    profile.name,
                    replaced.file.display()
                ));
            }
        }
        timeout = file.upstream_timeout.or(timeout);
        approval_ttl = file.approval_ttl.or(approval_ttl);
        config.demo = file.demo.unwrap_or(config.demo);
        config.semantic_search = file.semantic_search.or(config.semantic_search);
    }
    let active: Vec<String> = config.sources.iter().map(|s| s.id.clone()).collect();
    config.off_sources.retain(|s| !active.contains(&s.id));
    config.upstream_timeout = timeout.unwrap_or(Duration::from_millis(MAX_UPSTREAM_TIMEOUT_MS));
    config.approval_ttl = approval_ttl.unwrap_or(Duration::from_millis(MAX_APPROVAL_TTL_MS));
    config.exposure = exposure_choice(global, project);
    profile_warnings(&mut config);
    for profile in config.profiles.values() {
        for skill in profile.skills.iter().flatten() {
            if !config.skills.iter().any(|s| &s.id == skill) {
                config.warnings.push(format!(
                    "{}: profile `{}` names skill `{skill}`, which no file declares; the profile serves the others",
                    profile.file.display(),
                    profile.name
                ));
            }
        }
    }
    if !config.demo {
        for skill in config.skills.iter().filter(|s| s.active) {
            for requirement in skill.requires.iter().filter(|r| r.server() == "demo") {
                config.warnings.push(format!(
                    "{}: skill `{}` requires `{requirement}`, but the demo source is off (`options.demo: false`)",
                    skill.file.display(),
                    skill.id
                ));
            }
        }
    }
    config
}

/// Limits a profile sets that its mode never uses: run limits of a profile that serves no
/// `execute` (direct calls use only `inlineResultBytes`, and `wallMs` as their wait for a person).
fn profile_warnings(config: &mut HubConfig) {
    for profile in config.profiles.values() {
        if profile.mode.exposure() == ExposureMode::Code {
            continue;
        }
        let l = &profile.limits;
        let unused: Vec<&str> = [
            ("codeBytes", l.code_bytes),
            ("computeMs", l.compute_ms),
            ("memoryBytes", l.memory_bytes),
            ("maxCalls", l.max_calls),
            ("maxConcurrent", l.max_concurrent),
            ("upstreamTimeoutMs", l.upstream_timeout_ms),
        ]
        .iter()
        .filter(|(_, v)| v.is_some())
        .map(|(name, _)| *name)
        .collect();
        if !unused.is_empty() {
            config.warnings.push(format!(
                "{}: profile `{}` ({}) sets {}, which only code mode's runs use; its direct calls use inlineResultBytes and wallMs",
                profile.file.display(),
                profile.name,
                profile.mode.as_str(),
                unused.join(", ")
            ));
        }
    }
}

fn exposure_choice(global: Option<&CheckedFile>, project: Option<&CheckedFile>) -> ExposureChoice {
    match (project, global) {
        (Some(p), _) => match p.exposure {
            Some(mode) => ExposureChoice {
                mode,
                decided_by: format!("options.toolExposure in {}", p.file.display()),
            },
            None => ExposureChoice {
                mode: ExposureMode::ExposeAll,
                decided_by: format!(
                    "{} omits options.toolExposure, so expose-all applies",
                    p.file.display()
                ),
            },
        },
        (None, Some(g)) => match g.exposure {
            Some(mode) => ExposureChoice {
                mode,
                decided_by: format!("options.toolExposure in {}", g.file.display()),
            },
            None => ExposureChoice {
                mode: ExposureMode::Code,
                decided_by: format!(
                    "{} omits options.toolExposure; the hub's default profile (code mode) applies",
                    g.file.display()
                ),
            },
        },
        (None, None) => HubConfig::default().exposure,
    }
}
