//! How one surface names its sources' tools and prompts: under their source (`github.create_issue`),
//! or, for a source with `namespace: false` served alone, by the server's own names
//! (docs/relay.md, "One source under its own names").

use super::source_def::Origin;
use super::{Hub, Profile};

/// The names a surface gives its sources' tools and prompts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Naming {
    /// `source.name`, every source's.
    Namespaced,
    /// The server's own names, of the one source served (by its id).
    Bare(String),
}

impl Naming {
    /// The name a client sees for `source`'s `name`.
    pub fn shown(&self, source: &str, name: &str) -> String {
        match self {
            Self::Bare(bare) if bare == source => name.to_owned(),
            _ => format!("{source}.{name}"),
        }
    }

    /// The source and its own name of what a client named `shown`. Under bare names a name is
    /// the served source's, dots and all; `source.name` is taken too, so an address the hub
    /// printed elsewhere still works.
    pub fn split<'a>(&'a self, shown: &'a str) -> Option<(&'a str, &'a str)> {
        match self {
            Self::Bare(source) => Some(
                shown
                    .strip_prefix(source.as_str())
                    .and_then(|rest| rest.strip_prefix('.'))
                    .map_or((source.as_str(), shown), |own| (source.as_str(), own)),
            ),
            Self::Namespaced => shown.split_once('.'),
        }
    }
}

impl Hub {
    /// How the clients of `profile` (the hub's own for `None`) see names: bare when the one
    /// source it serves (sources turned off aside) was declared with `namespace: false`.
    pub fn naming_in(&self, profile: Option<&Profile>) -> Naming {
        let policy = self.policy_in(profile);
        let served: Vec<_> = self
            .source_defs()
            .into_iter()
            .filter(|d| !d.off && policy.serves_source(&d.id))
            .collect();
        match served.as_slice() {
            [only] => match &only.origin {
                Origin::Config(config) if config.bare_names => Naming::Bare(only.id.clone()),
                _ => Naming::Namespaced,
            },
            _ => Naming::Namespaced,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Naming;

    #[test]
    fn bare_names_show_and_split_the_served_source_only() {
        let bare = Naming::Bare("fixture".into());
        assert_eq!(
            bare.shown("fixture", "test_simple_text"),
            "test_simple_text"
        );
        assert_eq!(bare.shown("other", "x"), "other.x");
        assert_eq!(bare.split("a.b"), Some(("fixture", "a.b")));
        assert_eq!(bare.split("fixture.a.b"), Some(("fixture", "a.b")));
        let namespaced = Naming::Namespaced;
        assert_eq!(namespaced.shown("fixture", "p"), "fixture.p");
        assert_eq!(namespaced.split("fixture.p"), Some(("fixture", "p")));
        assert_eq!(namespaced.split("p"), None);
    }
}
