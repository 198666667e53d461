//! Which surface an exposure mode serves (tool-exposure.md, "Modes"): the hub's own mode at
//! `/mcp`, a named profile's at `/mcp/<name>` (docs/profiles.md).

use std::sync::Arc;

use capa_config::ExposureMode;
use capa_core::{Hub, Profile};

use crate::surface::Surface;

/// The surface the hub's exposure mode asks for (its `default` profile).
pub fn surface_for(hub: Arc<Hub>) -> Arc<dyn Surface> {
    surface_for_profile(hub, None)
}

/// The surface of `profile` (`None`: the hub's own): its mode, through its sources, skills,
/// rules and limits.
pub fn surface_for_profile(hub: Arc<Hub>, profile: Option<Profile>) -> Arc<dyn Surface> {
    let mode = profile
        .as_ref()
        .map_or(hub.config().exposure.mode, Profile::mode);
    match mode {
        ExposureMode::Code => Arc::new(crate::code::CodeSurface::new(hub, profile)),
        ExposureMode::Search => Arc::new(crate::modes::MetaSurface::new(
            hub,
            crate::modes::Meta::Search,
            profile,
        )),
        ExposureMode::OnDemand => Arc::new(crate::modes::MetaSurface::new(
            hub,
            crate::modes::Meta::OnDemand,
            profile,
        )),
        ExposureMode::None => Arc::new(crate::modes::NoneSurface),
        ExposureMode::ExposeAll => Arc::new(crate::local::LocalSurface::new(hub, profile)),
    }
}
