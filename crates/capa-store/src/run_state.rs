//! Where a run stands, as stored and as `/api/runs` shows it (the spec's spelling).

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunState {
    /// An attempt is under way (in the process its owner names).
    Running,
    /// The process running an attempt ended before the attempt did; a resume goes on with it.
    Interrupted,
    /// Waits for a person's decision on a call.
    AwaitingApproval,
    /// Waits for a connection (or for a source the run used to be ready).
    AwaitingConnection,
    Completed,
    Failed,
    /// Ended on a call a person denied: the refusal went uncaught, or the run was left
    /// waiting after the denial past the resume window.
    Denied,
    /// Ended because a decision came too late or was never used: an approval nobody gave
    /// within `approvalTtlMs`, or a run not resumed within the resume window after its inputs
    /// were settled.
    Expired,
    /// Its client cancelled or went away.
    Cancelled,
}

impl RunState {
    pub const ALL: [Self; 9] = [
        Self::Running,
        Self::Interrupted,
        Self::AwaitingApproval,
        Self::AwaitingConnection,
        Self::Completed,
        Self::Failed,
        Self::Denied,
        Self::Expired,
        Self::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Interrupted => "interrupted",
            Self::AwaitingApproval => "awaiting_approval",
            Self::AwaitingConnection => "awaiting_connection",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Denied => "denied",
            Self::Expired => "expired",
            Self::Cancelled => "cancelled",
        }
    }

    /// The state spelled `text`, if any.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// A run a resume may go on with (replay, or the same pending envelope).
    pub fn resumable(self) -> bool {
        matches!(
            self,
            Self::Running | Self::Interrupted | Self::AwaitingApproval | Self::AwaitingConnection
        )
    }
}

impl std::fmt::Display for RunState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl rusqlite::ToSql for RunState {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

impl rusqlite::types::FromSql for RunState {
    fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        let text = value.as_str()?;
        Self::parse(text).ok_or_else(|| {
            rusqlite::types::FromSqlError::Other(format!("unknown run status `{text}`").into())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_reads_back_as_itself() {
        for state in RunState::ALL {
            assert_eq!(RunState::parse(state.as_str()), Some(state));
        }
        assert_eq!(RunState::parse("done"), None);
    }
}
