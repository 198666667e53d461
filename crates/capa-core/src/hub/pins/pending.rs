//! A pending input keeps the digest of the definition its tool had when the person was asked,
//! so that a change while it waits shows beside it: the popup, the Pending page and
//! `capa hub pending` read the reason, which then starts by saying so.

use capa_store::{ApprovalRecord, InputKind};

use crate::approval::PendingInput;
use crate::hub::Hub;

impl Hub {
    /// Records the definition `record`'s tool has now (an approval just asked for).
    pub(crate) fn remember_definition(&self, record: &ApprovalRecord) {
        if record.kind != InputKind::Approval {
            return;
        }
        let Some(digest) = self.definition_digest(&record.address) else {
            return;
        };
        if let Err(e) = self.store().set_input_definition(&record.id, &digest) {
            tracing::warn!(error = %e, "could not record the definition a pending input was asked under");
        }
    }

    /// Says, in the reason of each input whose tool's definition changed since it was asked,
    /// that it did.
    pub(crate) fn mark_changed_definitions(&self, inputs: &mut [PendingInput]) {
        for input in inputs.iter_mut().filter(|i| i.kind == InputKind::Approval) {
            let asked = self.store().input_definition(&input.id).ok().flatten();
            let now = self.definition_digest(&input.address);
            if let (Some(asked), Some(now)) = (asked, now)
                && asked != now
            {
                input.reason = format!(
                    "the definition of {} changed since you were asked (capa tools changes shows how); asked because {}",
                    input.address, input.reason
                );
            }
        }
    }
}
