//! The vectors of the last few queries, so that a query asked again costs no model time.
//!
//! Agents repeat themselves: a retry after an error, the same need in the next run, a search
//! made again to check a name. A query's vector costs milliseconds of a core (and loading the
//! model, if it was let go); remembering a few dozen costs 1.5 KiB each. They live in memory
//! only, for as long as the hub runs.

use std::collections::VecDeque;
use std::sync::Mutex;

/// Queries remembered, the most recent first.
pub const RECENT_QUERIES: usize = 64;

/// A query's text and its vector, for the last [`RECENT_QUERIES`] queries asked.
#[derive(Debug, Default)]
pub struct RecentQueries(Mutex<VecDeque<(String, Vec<f32>)>>);

impl RecentQueries {
    /// `query`'s vector if it was asked recently (it becomes the most recent), else `embed`'s,
    /// which is remembered when there is one.
    pub fn get_or(
        &self,
        query: &str,
        embed: impl FnOnce() -> Option<Vec<f32>>,
    ) -> Option<Vec<f32>> {
        if let Some(vector) = self.take(query) {
            self.remember(query, vector.clone());
            return Some(vector);
        }
        let vector = embed()?;
        self.remember(query, vector.clone());
        Some(vector)
    }

    fn take(&self, query: &str) -> Option<Vec<f32>> {
        let mut recent = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let at = recent.iter().position(|(q, _)| q == query)?;
        recent.remove(at).map(|(_, vector)| vector)
    }

    fn remember(&self, query: &str, vector: Vec<f32>) {
        let mut recent = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        recent.retain(|(q, _)| q != query);
        recent.push_front((query.to_owned(), vector));
        recent.truncate(RECENT_QUERIES);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_query_is_answered_from_memory_and_the_oldest_is_forgotten() {
        let recent = RecentQueries::default();
        let mut asked = 0;
        let mut embed = |q: &str| {
            asked += 1;
            Some(vec![q.len() as f32])
        };
        assert_eq!(recent.get_or("a", || embed("a")), Some(vec![1.0]));
        assert_eq!(
            recent.get_or("a", || panic!("asked again")),
            Some(vec![1.0])
        );
        // A failed embedding is not remembered.
        assert_eq!(recent.get_or("bb", || None), None);
        for i in 0..RECENT_QUERIES - 1 {
            let q = format!("query {i}");
            recent.get_or(&q, || embed(&q));
        }
        // "a" is still the oldest of RECENT_QUERIES; asking it makes it the newest.
        assert!(recent.get_or("a", || None).is_some());
        recent.get_or("one more", || embed("one more"));
        assert!(recent.get_or("a", || None).is_some(), "the newest stays");
        assert!(
            recent.get_or("query 0", || None).is_none(),
            "the oldest went"
        );
        assert_eq!(asked, RECENT_QUERIES + 1);
    }
}
