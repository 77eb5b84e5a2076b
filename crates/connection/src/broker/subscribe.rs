//! Resource subscriptions of one shared server: the server is subscribed to a resource once, for
//! as long as any of its sessions is, and its updates of a resource go to the sessions subscribed
//! to it.

use std::collections::{HashMap, HashSet};

/// Which connections (by id) are subscribed to which resource (by URI).
#[derive(Default)]
pub struct Subscriptions(HashMap<String, HashSet<u64>>);

impl Subscriptions {
    /// Records that `hop` subscribed to `uri`; true when the server is to be asked (the first).
    pub fn add(&mut self, uri: &str, hop: u64) -> bool {
        let hops = self.0.entry(uri.to_string()).or_default();
        hops.insert(hop);
        hops.len() == 1
    }

    /// Records that `hop` unsubscribed from `uri`; true when the server is to be told (it was
    /// the last).
    pub fn remove(&mut self, uri: &str, hop: u64) -> bool {
        let Some(hops) = self.0.get_mut(uri) else {
            return false;
        };
        let was = hops.remove(&hop);
        if hops.is_empty() {
            self.0.remove(uri);
            return was;
        }
        false
    }

    /// Drops every subscription of `hop` (it left); the resources nobody is subscribed to now.
    pub fn leave(&mut self, hop: u64) -> Vec<String> {
        let uris: Vec<String> = self.0.keys().cloned().collect();
        uris.into_iter()
            .filter(|uri| self.remove(uri, hop))
            .collect()
    }

    /// The connections subscribed to `uri`.
    pub fn of(&self, uri: &str) -> HashSet<u64> {
        self.0.get(uri).cloned().unwrap_or_default()
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_hears_the_first_subscription_and_the_last_unsubscription() {
        let mut subs = Subscriptions::default();
        assert!(subs.add("file:///a", 1), "the first asks the server");
        assert!(!subs.add("file:///a", 2));
        assert!(!subs.add("file:///a", 2), "twice is once");
        assert_eq!(subs.of("file:///a"), HashSet::from([1, 2]));
        assert!(
            !subs.remove("file:///a", 1),
            "another session still wants it"
        );
        assert!(!subs.remove("file:///b", 2), "never subscribed");
        assert!(subs.remove("file:///a", 2), "the last tells the server");
        assert!(subs.of("file:///a").is_empty());
    }

    #[test]
    fn a_session_that_leaves_gives_up_what_only_it_wanted() {
        let mut subs = Subscriptions::default();
        subs.add("file:///mine", 1);
        subs.add("file:///ours", 1);
        subs.add("file:///ours", 2);
        assert_eq!(subs.leave(1), ["file:///mine"]);
        assert_eq!(subs.of("file:///ours"), HashSet::from([2]));
        assert!(subs.leave(7).is_empty());
    }
}
