//! An upstream's error as it leaves the core: every text it carries redacted.

use crate::redact::Redactor;

pub(super) fn redacted(
    redactor: &Redactor,
    error: capa_upstream::UpstreamError,
) -> capa_upstream::UpstreamError {
    use capa_upstream::UpstreamError as E;
    match error {
        E::Unavailable { source_id, reason } => E::Unavailable {
            source_id,
            reason: redactor.redact(&reason),
        },
        E::Protocol {
            source_id,
            code,
            message,
        } => E::Protocol {
            source_id,
            code,
            message: redactor.redact(&message),
        },
        E::ClientLacks {
            source_id,
            required,
            message,
        } => E::ClientLacks {
            source_id,
            required: Box::new(super::redacting_asker::redacted(redactor, *required)),
            message: redactor.redact(&message),
        },
        E::Unanswered {
            source_id,
            key,
            reason,
        } => E::Unanswered {
            source_id,
            key: redactor.redact(&key),
            reason: redactor.redact(&reason),
        },
        other => other,
    }
}
