//! Which surface the hub's exposure mode serves (tool-exposure.md, "Modes").

use std::sync::Arc;

use capa_config::ExposureMode;
use capa_core::Hub;

use crate::surface::Surface;

/// The surface the hub's exposure mode asks for.
pub fn surface_for(hub: Arc<Hub>) -> Arc<dyn Surface> {
    match hub.config().exposure.mode {
        ExposureMode::Code => Arc::new(crate::code::CodeSurface::new(hub)),
        ExposureMode::Search => Arc::new(crate::modes::MetaSurface::new(
            hub,
            crate::modes::Meta::Search,
        )),
        ExposureMode::OnDemand => Arc::new(crate::modes::MetaSurface::new(
            hub,
            crate::modes::Meta::OnDemand,
        )),
        ExposureMode::None => Arc::new(crate::modes::NoneSurface),
        ExposureMode::ExposeAll => Arc::new(crate::local::LocalSurface::new(hub)),
    }
}
