//! What the layers above keep with a toolset: values computed from its
//! tools alone, made once and shared by every listing of the same toolset.
//!
//! The toolset does not know what is kept (the listing layer, above it,
//! decides): each entry is a value of the keeper's own type, found again by
//! its type and a key the keeper checks. Entries are few (one per set of
//! schema rules a toolset is listed with, say), and bounded: an entry whose
//! key has gone ([`Kept::stale`]) is dropped when a new one comes, and past
//! [`MAX_ENTRIES`] the oldest goes.

use std::any::Any;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

/// The most entries a toolset keeps; past it, the oldest is dropped.
pub(crate) const MAX_ENTRIES: usize = 16;

/// A value kept with a toolset.
pub(crate) trait Kept: Any + Send + Sync {
    /// Whether the value can no longer be asked for (what its key refers to
    /// is gone), so that it may be dropped.
    fn stale(&self) -> bool {
        false
    }
}

/// The entries kept with one toolset. A toolset made from another (a tool
/// added) starts with none: what was kept describes the other's tools.
#[derive(Default)]
pub(crate) struct Memo {
    entries: Mutex<Vec<Arc<dyn Kept>>>,
}

impl Memo {
    /// The kept `T` that `matches`, or the one `make` makes, kept from now on.
    pub(crate) fn get_or_insert<T: Kept>(
        &self,
        matches: impl Fn(&T) -> bool,
        make: impl FnOnce() -> T,
    ) -> Arc<T> {
        match self.get_or_try_insert(matches, || Ok::<T, std::convert::Infallible>(make())) {
            Ok(kept) => kept,
            Err(never) => match never {},
        }
    }

    /// The kept `T` that `matches`, or the one `make` makes, kept from now
    /// on; nothing is kept when `make` fails.
    pub(crate) fn get_or_try_insert<T: Kept, E>(
        &self,
        matches: impl Fn(&T) -> bool,
        make: impl FnOnce() -> Result<T, E>,
    ) -> Result<Arc<T>, E> {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let found = entries.iter().find_map(|entry| {
            let any: Arc<dyn Any + Send + Sync> = entry.clone();
            any.downcast::<T>().ok().filter(|t| matches(t))
        });
        if let Some(found) = found {
            return Ok(found);
        }
        let made = Arc::new(make()?);
        entries.retain(|entry| !entry.stale());
        if entries.len() >= MAX_ENTRIES {
            entries.remove(0);
        }
        entries.push(made.clone());
        Ok(made)
    }

    /// How many entries are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

impl Clone for Memo {
    fn clone(&self) -> Self {
        Memo::default()
    }
}

impl fmt::Debug for Memo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let len = self
            .entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        f.debug_struct("Memo").field("entries", &len).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Weak;

    struct Keyed(Weak<u32>, u32);

    impl Kept for Keyed {
        fn stale(&self) -> bool {
            self.0.strong_count() == 0
        }
    }

    struct Other;

    impl Kept for Other {}

    #[test]
    fn entries_are_found_by_type_and_key() {
        let memo = Memo::default();
        let (a, b) = (Arc::new(1), Arc::new(2));
        let key = |k: &Arc<u32>| {
            let k = Arc::downgrade(k);
            move |e: &Keyed| Weak::ptr_eq(&e.0, &k)
        };
        let first = memo.get_or_insert(key(&a), || Keyed(Arc::downgrade(&a), 10));
        let again = memo.get_or_insert(key(&a), || Keyed(Arc::downgrade(&a), 11));
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(again.1, 10);
        let other_key = memo.get_or_insert(key(&b), || Keyed(Arc::downgrade(&b), 20));
        assert_eq!(other_key.1, 20);
        memo.get_or_insert(|_: &Other| true, || Other);
        assert_eq!(memo.len(), 3);
    }

    #[test]
    fn stale_entries_go_and_the_count_is_bounded() {
        let memo = Memo::default();
        let gone = Arc::new(0);
        memo.get_or_insert(|_: &Keyed| false, || Keyed(Arc::downgrade(&gone), 0));
        drop(gone);
        let live: Vec<Arc<u32>> = (0..40).map(Arc::new).collect();
        for (i, k) in live.iter().enumerate() {
            memo.get_or_insert(|_: &Keyed| false, || Keyed(Arc::downgrade(k), i as u32));
            assert!(memo.len() <= MAX_ENTRIES);
        }
        assert_eq!(memo.len(), MAX_ENTRIES);
    }
}
